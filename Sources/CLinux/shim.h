#include <errno.h>
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

// O_TMPFILE (glibc names it only under _GNU_SOURCE; __O_TMPFILE is its value, O_DIRECTORY included):
// open(2) of a folder with it makes a file with no name, which linkat(2) can later give one.
#include <fcntl.h>
static inline int clinux_o_tmpfile(void) { return __O_TMPFILE; }
// O_PATH, likewise only under _GNU_SOURCE: a descriptor that names a file without opening it.
static inline int clinux_o_path(void) { return __O_PATH; }

// copy_file_range(2) from the current offsets of both descriptors: the kernel copies, no bytes pass
// through this process. Returns the bytes copied, 0 at the end of the input, -1 with errno.
static inline ssize_t clinux_copy_file_range(int in, int out, size_t length) { return (ssize_t)syscall(SYS_copy_file_range, in, NULL, out, NULL, length, 0u); }

// fallocate(2) with FALLOC_FL_KEEP_SIZE (1): allocates `length` bytes from `offset` without
// changing the file's size, so that writing them later cannot fail for want of room (an append
// still writes at the end). -1 with errno (EOPNOTSUPP where the file system cannot).
static inline int clinux_fallocate_keeping_size(int fd, off_t offset, off_t length) { return (int)syscall(SYS_fallocate, fd, 1, offset, length); }

// sync_file_range(2) with SYNC_FILE_RANGE_WRITE (2): starts writing back a range's dirty pages and
// returns without waiting, so that a later fsync has little left to do.
static inline int clinux_start_writeback(int fd, off_t offset, off_t length) { return (int)syscall(SYS_sync_file_range, fd, offset, length, 2u); }

// A system call made with the processor's own instruction, not through glibc's exported syscall(3):
// a library preloaded into mapgate (LD_PRELOAD) can replace syscall(3) as it can clock_gettime(3),
// but not an instruction compiled into the binary (issue 35). Returns the kernel's answer: a
// negative errno on failure. Other processors go through syscall(3).
static inline long clinux_raw_syscall5(long n, long a, long b, long c, long d, long e) {
#if defined(__x86_64__)
    long result; register long r10 __asm__("r10") = d; register long r8 __asm__("r8") = e;
    __asm__ volatile ("syscall" : "=a"(result) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8) : "rcx", "r11", "memory");
    return result;
#elif defined(__aarch64__)
    register long x8 __asm__("x8") = n; register long x0 __asm__("x0") = a; register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c; register long x3 __asm__("x3") = d; register long x4 __asm__("x4") = e;
    __asm__ volatile ("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4) : "memory");
    return x0;
#else
    long result = syscall(n, a, b, c, d, e); return result < 0 ? -errno : result;
#endif
}

// clock_gettime(CLOCK_BOOTTIME) made by the kernel (clinux_raw_syscall5), not through the C
// library: a library preloaded to fake the time (libfaketime, or one replacing syscall(3)) cannot
// speed this reading up, slow it down or freeze it. Nanoseconds since boot; 0 on failure.
static inline unsigned long long clinux_boottime_ns(void) { struct timespec t; if (clinux_raw_syscall5(SYS_clock_gettime, CLOCK_BOOTTIME, (long)&t, 0, 0, 0) != 0) return 0; return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec; }

// ppoll(2) made by the kernel with a relative timeout (see above): waits until a descriptor is
// ready or the time has passed, as the kernel measures it. Returns ppoll's result, -1 with errno.
static inline int clinux_ppoll(struct pollfd *fds, unsigned long count, long long timeout_ns) { struct timespec t = { (time_t)(timeout_ns / 1000000000ll), (long)(timeout_ns % 1000000000ll) }; long r = clinux_raw_syscall5(SYS_ppoll, (long)fds, (long)count, (long)&t, 0, 8); if (r < 0) { errno = (int)-r; return -1; } return (int)r; }

// prctl(PR_SET_NAME): names the calling thread (what Foundation's Thread.name did through
// pthread_setname_np, which glibc declares only under _GNU_SOURCE); prctl is variadic. The kernel
// keeps the first 15 bytes. Returns 0, or -1 with errno.
static inline int clinux_set_thread_name(const char *name) { return prctl(PR_SET_NAME, (unsigned long)name, 0ul, 0ul, 0ul); }

// statfs(2)'s f_type (the file system's magic number) of the file at `path`, or -1 with errno:
// Swift's Glibc module does not bring <sys/vfs.h>.
static inline long clinux_filesystem_type(const char *path) { struct statfs s; if (statfs(path, &s) != 0) return -1; return (long)s.f_type; }
// The same for an open file descriptor (fstatfs(2)).
static inline long clinux_descriptor_filesystem_type(int fd) { struct statfs s; if (fstatfs(fd, &s) != 0) return -1; return (long)s.f_type; }
// One of this process's namespaces as the kernel holds it: a pidfd of itself (pidfd_open(2),
// made through syscall(2)) asked with one of Linux 6.11's PIDFD_GET_*_NAMESPACE requests
// (ioctl(2), variadic). No path is read, so no mount over /proc can answer instead. A descriptor
// of the namespace, or -1 with errno (ENOTTY or EINVAL on an older kernel).
#include <sys/ioctl.h>
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
static inline int clinux_own_namespace(unsigned int request) { int pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0u); if (pidfd < 0) return -1; int ns = ioctl(pidfd, request, 0); int saved = errno; close(pidfd); errno = saved; return ns; }

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
// The character set of the user's locale (LC_CTYPE), as glibc names it: "UTF-8", "EUC-JP", "ANSI_X3.4-1968"…
#include <langinfo.h>
static inline const char *clinux_codeset(void) { const char *name = nl_langinfo(CODESET); return name ? name : ""; }
// The C library's own messages (strerror, gai_strerror) in English: they come in the locale's
// character set, which mapgate would misread where that is not UTF-8.
static inline void clinux_use_c_messages(void) { setlocale(LC_MESSAGES, "C"); }
#include <stdio.h>
// The character set of the locale the environment names (LANG, LC_ALL, LC_CTYPE), without making it
// the process's: a thread's copy of its name (up to 63 bytes); "ANSI_X3.4-1968" when there is none.
static inline const char *clinux_environment_codeset(void) {
    static __thread char name[64];
    locale_t locale = newlocale(LC_CTYPE_MASK, "", (locale_t)0);
    if (!locale) return "ANSI_X3.4-1968";
    snprintf(name, sizeof name, "%s", nl_langinfo_l(CODESET, locale));
    freelocale(locale);
    return name;
}
static inline int clinux_use_message_locale(void) { int ok = setlocale(LC_CTYPE, "") != NULL; return setlocale(LC_MESSAGES, "") != NULL && ok; }
static inline const char *clinux_bind_text_domain(const char *domain, const char *folder) { bind_textdomain_codeset(domain, "UTF-8"); return bindtextdomain(domain, folder); }
static inline const char *clinux_dgettext(const char *domain, const char *msgid) { return dgettext(domain, msgid); }
static inline const char *clinux_dngettext(const char *domain, const char *singular, const char *plural, unsigned long n) { return dngettext(domain, singular, plural, n); }
static inline const char *clinux_message_locale(void) { const char *name = setlocale(LC_MESSAGES, NULL); return name ? name : "C"; }

// The columns of the terminal on `fd` (TIOCGWINSZ through ioctl(2), which is variadic), or 0 when
// it is not a terminal or does not say.
#include <sys/ioctl.h>
static inline int clinux_terminal_columns(int fd) { struct winsize w; if (ioctl(fd, TIOCGWINSZ, &w) != 0) return 0; return (int)w.ws_col; }

// Local (AF_UNIX) sockets for system mode (issue 36). Swift's Glibc module has no sockaddr_un
// helpers, no `struct ucred` (glibc declares it only under _GNU_SOURCE) and cannot use the CMSG_*
// macros, so each step is one call here.
#include <sys/socket.h>
#include <sys/un.h>
#include <string.h>
// A stream socket bound to, or connected to, `path` (at most 107 bytes): the descriptor, or -1
// with errno (ENAMETOOLONG for a longer path). Close-on-exec.
static inline int clinux_local_socket(const char *path, int listening) { struct sockaddr_un a; memset(&a, 0, sizeof a); a.sun_family = AF_UNIX; if (strlen(path) >= sizeof a.sun_path) { errno = ENAMETOOLONG; return -1; } strcpy(a.sun_path, path); int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0); if (fd < 0) return -1; int r = listening ? bind(fd, (struct sockaddr *)&a, sizeof a) : connect(fd, (struct sockaddr *)&a, sizeof a); if (r == 0 && listening) r = listen(fd, 64); if (r != 0) { int e = errno; close(fd); errno = e; return -1; } return fd; }
// A local socket bound to the abstract name `name` (Linux: no file, gone with its process): a lock
// every process of this machine (of this network namespace) sees, which no file can stand in for
// and none can keep once its holder ends. The descriptor, or -1 with errno (EADDRINUSE: held).
static inline int clinux_abstract_lock(const char *name) { struct sockaddr_un a; memset(&a, 0, sizeof a); a.sun_family = AF_UNIX; size_t n = strlen(name); if (n + 1 > sizeof a.sun_path) { errno = ENAMETOOLONG; return -1; } memcpy(a.sun_path + 1, name, n); int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0); if (fd < 0) return -1; if (bind(fd, (struct sockaddr *)&a, (socklen_t)(sizeof a.sun_family + 1 + n)) != 0) { int e = errno; close(fd); errno = e; return -1; } return fd; }
// accept(2) of a connection, close-on-exec from the start (accept4 is declared only under _GNU_SOURCE).
static inline int clinux_accept(int fd) { return (int)syscall(SYS_accept4, fd, NULL, NULL, SOCK_CLOEXEC); }
// The peer's uid, gid and pid as the kernel recorded them when it connected (SO_PEERCRED).
struct clinux_ucred { pid_t pid; uid_t uid; gid_t gid; };  // struct ucred's layout
static inline int clinux_peer_credentials(int fd, uid_t *uid, gid_t *gid, pid_t *pid) { struct clinux_ucred c; socklen_t n = sizeof c; if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c, &n) != 0) return -1; *uid = c.uid; *gid = c.gid; *pid = c.pid; return 0; }
#ifndef SO_PEERGROUPS
#define SO_PEERGROUPS 59
#endif
// The peer's supplementary groups when it connected (SO_PEERGROUPS, Linux 4.13): how many, or -1.
static inline int clinux_peer_groups(int fd, gid_t *groups, int capacity) { socklen_t n = (socklen_t)(capacity * (int)sizeof(gid_t)); if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &n) != 0) return -1; return (int)(n / sizeof(gid_t)); }
// sendmsg(2) of `length` bytes with `count` (at most 8) descriptors attached (SCM_RIGHTS).
static inline ssize_t clinux_send_descriptors(int fd, const void *bytes, size_t length, const int *fds, int count) { struct iovec v = { (void *)bytes, length }; union { char buffer[CMSG_SPACE(8 * sizeof(int))]; struct cmsghdr align; } u; memset(&u, 0, sizeof u); struct msghdr m; memset(&m, 0, sizeof m); m.msg_iov = &v; m.msg_iovlen = 1; if (count > 0) { if (count > 8) { errno = EINVAL; return -1; } m.msg_control = u.buffer; m.msg_controllen = CMSG_SPACE(count * sizeof(int)); struct cmsghdr *c = CMSG_FIRSTHDR(&m); c->cmsg_level = SOL_SOCKET; c->cmsg_type = SCM_RIGHTS; c->cmsg_len = CMSG_LEN(count * sizeof(int)); memcpy(CMSG_DATA(c), fds, count * sizeof(int)); } return sendmsg(fd, &m, MSG_NOSIGNAL); }
// recvmsg(2) of at most `length` bytes; descriptors that came with them (at most 8, close-on-exec)
// go to `fds` and their number to `*count`. A message with more, or with cut-off control data,
// has every descriptor closed and fails with EBADMSG.
static inline ssize_t clinux_receive_descriptors(int fd, void *bytes, size_t length, int *fds, int *count) { struct iovec v = { bytes, length }; union { char buffer[CMSG_SPACE(8 * sizeof(int))]; struct cmsghdr align; } u; struct msghdr m; memset(&m, 0, sizeof m); m.msg_iov = &v; m.msg_iovlen = 1; m.msg_control = u.buffer; m.msg_controllen = sizeof u.buffer; *count = 0; ssize_t r = recvmsg(fd, &m, MSG_CMSG_CLOEXEC); if (r < 0) return r; int bad = (m.msg_flags & MSG_CTRUNC) != 0; for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) { if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue; int n = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int)); int *received = (int *)CMSG_DATA(c); for (int i = 0; i < n; i++) { if (*count < 8 && !bad) fds[(*count)++] = received[i]; else close(received[i]); } } if (bad) { for (int i = 0; i < *count; i++) close(fds[i]); *count = 0; errno = EBADMSG; return -1; } return r; }
// pidfd_open(2) (Linux 5.3): a descriptor that becomes readable when the process `pid` ends, so
// that one poll(2) waits for a child and a socket at once. -1 with errno.
static inline int clinux_pidfd_open(pid_t pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }
