#include <poll.h>
#include <sys/syscall.h>
#include <time.h>
#include <sys/types.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/vfs.h>
#include <malloc.h>

// Linux calls glibc declares only under _GNU_SOURCE, which Swift's Glibc module is built without:
// made through syscall(2), which is variadic and so cannot be called from Swift either.

// copy_file_range(2) from the current offsets of both descriptors: the kernel copies, no bytes pass
// through this process. Returns the bytes copied, 0 at the end of the input, -1 with errno.
static inline ssize_t clinux_copy_file_range(int in, int out, size_t length) { return (ssize_t)syscall(SYS_copy_file_range, in, NULL, out, NULL, length, 0u); }

// sync_file_range(2) with SYNC_FILE_RANGE_WRITE (2): starts writing back a range's dirty pages and
// returns without waiting, so that a later fsync has little left to do.
static inline int clinux_start_writeback(int fd, off_t offset, off_t length) { return (int)syscall(SYS_sync_file_range, fd, offset, length, 2u); }

// clock_gettime(CLOCK_BOOTTIME) made by the kernel, not through the C library: a library preloaded
// to fake the time (libfaketime) replaces clock_gettime(3), never the system call, so this reading
// cannot be sped up, slowed down or frozen by the user. Nanoseconds since boot; 0 on failure.
static inline unsigned long long clinux_boottime_ns(void) { struct timespec t; if (syscall(SYS_clock_gettime, CLOCK_BOOTTIME, &t) != 0) return 0; return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec; }

// ppoll(2) made by the kernel with a relative timeout (see above): waits until a descriptor is
// ready or the time has passed, as the kernel measures it. Returns ppoll's result, -1 with errno.
static inline int clinux_ppoll(struct pollfd *fds, unsigned long count, long long timeout_ns) { struct timespec t = { (time_t)(timeout_ns / 1000000000ll), (long)(timeout_ns % 1000000000ll) }; return (int)syscall(SYS_ppoll, fds, count, &t, (void *)0, (size_t)8); }

// prctl(PR_SET_NAME): names the calling thread (what Foundation's Thread.name did through
// pthread_setname_np, which glibc declares only under _GNU_SOURCE); prctl is variadic. The kernel
// keeps the first 15 bytes. Returns 0, or -1 with errno.
static inline int clinux_set_thread_name(const char *name) { return prctl(PR_SET_NAME, (unsigned long)name, 0ul, 0ul, 0ul); }

// statfs(2)'s f_type (the file system's magic number) of the file at `path`, or -1 with errno:
// Swift's Glibc module does not bring <sys/vfs.h>.
static inline long clinux_filesystem_type(const char *path) { struct statfs s; if (statfs(path, &s) != 0) return -1; return (long)s.f_type; }

// mallopt(M_MMAP_THRESHOLD): allocations of `bytes` and more are mapped, and unmapped when freed.
// A fixed threshold also stops glibc from raising it after each large free. Returns 1, or 0.
static inline int clinux_set_mmap_threshold(int bytes) { return mallopt(M_MMAP_THRESHOLD, bytes); }

// wcwidth(3): the columns a character takes on a terminal, in the calling thread's LC_CTYPE
// (glibc declares it only under _XOPEN_SOURCE, which Swift's Glibc module is built without).
#include <wchar.h>
int wcwidth(wchar_t c);

// GNU gettext as glibc has it (issue 29): the message catalogs of the user's language, chosen by
// LANGUAGE, LC_ALL, LC_MESSAGES and LANG as every Linux program does. Only LC_MESSAGES and LC_CTYPE
// follow the environment: numbers and dates mapgate writes stay as they are.
#include <libintl.h>
#include <locale.h>
static inline int clinux_use_message_locale(void) { int ok = setlocale(LC_CTYPE, "") != NULL; return setlocale(LC_MESSAGES, "") != NULL && ok; }
static inline const char *clinux_bind_text_domain(const char *domain, const char *folder) { bind_textdomain_codeset(domain, "UTF-8"); return bindtextdomain(domain, folder); }
static inline const char *clinux_dgettext(const char *domain, const char *msgid) { return dgettext(domain, msgid); }
static inline const char *clinux_dngettext(const char *domain, const char *singular, const char *plural, unsigned long n) { return dngettext(domain, singular, plural, n); }
static inline const char *clinux_message_locale(void) { const char *name = setlocale(LC_MESSAGES, NULL); return name ? name : "C"; }

// The columns of the terminal on `fd` (TIOCGWINSZ through ioctl(2), which is variadic), or 0 when
// it is not a terminal or does not say.
#include <sys/ioctl.h>
static inline int clinux_terminal_columns(int fd) { struct winsize w; if (ioctl(fd, TIOCGWINSZ, &w) != 0) return 0; return (int)w.ws_col; }
