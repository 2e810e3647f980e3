#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

// Linux calls glibc declares only under _GNU_SOURCE, which Swift's Glibc module is built without:
// made through syscall(2), which is variadic and so cannot be called from Swift either.

// copy_file_range(2) from the current offsets of both descriptors: the kernel copies, no bytes pass
// through this process. Returns the bytes copied, 0 at the end of the input, -1 with errno.
static inline ssize_t clinux_copy_file_range(int in, int out, size_t length) { return (ssize_t)syscall(SYS_copy_file_range, in, NULL, out, NULL, length, 0u); }

// sync_file_range(2) with SYNC_FILE_RANGE_WRITE (2): starts writing back a range's dirty pages and
// returns without waiting, so that a later fsync has little left to do.
static inline int clinux_start_writeback(int fd, off_t offset, off_t length) { return (int)syscall(SYS_sync_file_range, fd, offset, length, 2u); }
