//! A log of 16-byte records in a mapped FILE, written as Rust programs write one without crates: the C
//! library's `mmap` and `msync` (which the `libc` and `memmap2` crates call), and `File::sync_all` (fsync).
//! `append FILE N [unsynced-record]` writes record i, msyncs its page (MS_SYNC, as memmap2's `flush`
//! does), then the count, and syncs the file (with unsynced-record, the record waits for the count's
//! sync); `check FILE` exits 1 when a counted record is not whole. Builds with rustc 1.63 and later.
use std::fs::{File, OpenOptions};
use std::os::raw::{c_int, c_long, c_void};
use std::os::unix::io::AsRawFd;
use std::process::exit;

extern "C" {
    fn mmap(addr: *mut c_void, len: usize, prot: c_int, flags: c_int, fd: c_int, off: c_long) -> *mut c_void;
    fn msync(addr: *mut c_void, len: usize, flags: c_int) -> c_int;
}
const PROT_READ: c_int = 1;
const PROT_WRITE: c_int = 2;
const MAP_SHARED: c_int = 1;
const MS_SYNC: c_int = 4;
const BYTES: usize = 4096;

fn record(i: u64) -> (u64, u64) {
    (i + 1, (i + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

fn map(file: &File) -> *mut u64 {
    let p = unsafe { mmap(std::ptr::null_mut(), BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, file.as_raw_fd(), 0) };
    if p as isize == -1 {
        eprintln!("mmap: {}", std::io::Error::last_os_error());
        exit(2);
    }
    p as *mut u64
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: mapped_log append FILE N [unsynced-record] | mapped_log check FILE");
        exit(2);
    }
    let file = OpenOptions::new().read(true).write(true).create(true).open(&args[2]).unwrap_or_else(|e| {
        eprintln!("{}: {}", args[2], e);
        exit(2)
    });
    if file.metadata().map(|m| m.len()).unwrap_or(0) == 0 {
        file.set_len(BYTES as u64).expect("set_len");
    }
    let log = map(&file);
    let word = |i: usize| unsafe { log.add(i) };
    if args[1] == "check" {
        let count = unsafe { word(0).read_volatile() };
        for i in 0..count {
            let at = 8 + 2 * i as usize;
            if at + 1 >= BYTES / 8 || unsafe { (word(at).read_volatile(), word(at + 1).read_volatile()) } != record(i) {
                eprintln!("record {} of {} counted is not whole", i, count);
                exit(1);
            }
        }
        return;
    }
    let n: u64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        eprintln!("append needs a record count");
        exit(2)
    });
    if 8 + 2 * n > (BYTES / 8) as u64 {
        eprintln!("{} records do not fit the {}-byte log", n, BYTES);
        exit(2);
    }
    let unsynced_record = args.get(4).map(|s| s == "unsynced-record").unwrap_or(false);
    for i in 0..n {
        let at = 8 + 2 * i as usize;
        let (a, b) = record(i);
        unsafe {
            word(at).write_volatile(a);
            word(at + 1).write_volatile(b);
        }
        if !unsynced_record && unsafe { msync(log as *mut c_void, BYTES, MS_SYNC) } != 0 {
            eprintln!("msync: {}", std::io::Error::last_os_error());
            exit(1);
        }
        unsafe { word(0).write_volatile(i + 1) };
        file.sync_all().expect("fsync");
    }
}
