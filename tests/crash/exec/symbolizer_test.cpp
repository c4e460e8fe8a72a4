// Which frames of a failure's stack are the program's own: a library's are left out of what it prints.
#include "pmlab/crash/exec/symbolizer.hpp"

#include <gtest/gtest.h>

namespace pmlab::crash::exec {
namespace {

TEST(ExecSymbols, TheStandardLibrariesCompiledIntoAProgramAreNotItsOwnCode) {
  // Rust's standard library, by its sources as rustup's and Debian's toolchains record them.
  EXPECT_TRUE(library_source("/rustc/90b35a6239c3d8bdabc530a6a0816f7ff89a0aaf/library/std/src/sys/unix/fs.rs"));
  EXPECT_TRUE(library_source("library/core/src/ops/function.rs"));
  EXPECT_TRUE(library_source("/usr/src/rustc-1.63.0/library/alloc/src/vec/mod.rs"));
  EXPECT_TRUE(library_source("/usr/include/c++/12/bits/std_thread.h"));
  EXPECT_TRUE(library_source("/opt/pmlab/include/pmlab/trace.h"));
  EXPECT_FALSE(library_source("src/main.rs"));
  EXPECT_FALSE(library_source("/home/me/engine/library/storage/src/log.rs"));
  // By name, where a frame has no line.
  EXPECT_TRUE(standard_library_function("std::sys::unix::fs::File::fsync"));
  EXPECT_TRUE(standard_library_function("<std::sys::fs::unix::File>::fsync::os_fsync"));
  EXPECT_TRUE(standard_library_function("core::ops::function::FnOnce::call_once"));
  EXPECT_TRUE(standard_library_function("std::vector<int, std::allocator<int> >::push_back"));
  EXPECT_FALSE(standard_library_function("mapped_log::main"));
  EXPECT_FALSE(standard_library_function("stdlog::append"));
  EXPECT_FALSE(standard_library_function("<engine::Log as core::ops::drop::Drop>::drop"));
}

TEST(ExecSymbols, PmdksLibrariesAreNamedWholeNotByTheirPrefix) {
  for (const char* pmdk : {"/usr/local/lib/libpmem.so.1", "/opt/pmdk/lib/libpmem2.so.1.0.0", "libpmemobj.so.1",
                           "/usr/lib/x86_64-linux-gnu/libpmemlog.so.1", "/work/build/libpmlab.so.0"})
    EXPECT_TRUE(library_module(pmdk)) << pmdk;
  for (const char* own : {"/work/build/subjects/libpmem-log-plugin.so", "/srv/engine/libpmemstore.so", "kvstore"})
    EXPECT_FALSE(library_module(own)) << own;
}

}  // namespace
}  // namespace pmlab::crash::exec
