// Where PMDK's pools go beside a run's pool, and PMEM_IS_PMEM_FORCE as PMDK will read it.
#include "pmlab/pmdk/environment.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "../support/temp_dir.hpp"

namespace pmlab::pmdk {
namespace {

TEST(PmdkEnvironment, DirectoryOfMappingIsTheMappedFilesDirectory) {
  pmlab::testing::TempDir dir;
  const std::string path = dir.file("region");
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, 1 << 16), 0);
  void* file = ::mmap(nullptr, 1 << 16, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  ASSERT_NE(file, MAP_FAILED);
  auto found = directory_of_mapping(static_cast<char*>(file) + 4096);  // any address inside it
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(*found, dir.path());
  ::munmap(file, 1 << 16);

  void* anonymous = ::mmap(nullptr, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(anonymous, MAP_FAILED);
  auto none = directory_of_mapping(anonymous);
  EXPECT_EQ(none.status().code(), Errc::unsupported);  // a DRAM region: PMDK's peers are skipped there
  ::munmap(anonymous, 1 << 16);
}

TEST(PmdkEnvironment, ForcesPmemUnlessTheUserChoseOtherwise) {
  const char* before = std::getenv("PMEM_IS_PMEM_FORCE");
  const std::string saved = before ? before : "";
  ::unsetenv("PMEM_IS_PMEM_FORCE");
  EXPECT_EQ(force_pmem_is_pmem(), 1);
  EXPECT_STREQ(std::getenv("PMEM_IS_PMEM_FORCE"), "1");
  ::setenv("PMEM_IS_PMEM_FORCE", "0", 1);  // the user's choice stands: PMDK then measures msync
  EXPECT_EQ(force_pmem_is_pmem(), 0);
  if (before) ::setenv("PMEM_IS_PMEM_FORCE", saved.c_str(), 1);
  else ::unsetenv("PMEM_IS_PMEM_FORCE");
}

}  // namespace
}  // namespace pmlab::pmdk
