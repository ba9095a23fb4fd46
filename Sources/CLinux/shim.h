/* CLinux: Linux system calls the C library does not wrap for Swift (syscall(2) is variadic; siginfo_t's fields are
 * macros over unions). Header-only; prefix nashim_. */
#include <errno.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* eventfd(2), non-blocking and close-on-exec: the event fd of a client's started calls. -1 with errno. */
static inline int nashim_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

/* pidfd_open(2) (Linux 5.3): a file descriptor that refers to process pid itself, not to whichever process has that
 * number later. -1 with errno (ENOSYS on older kernels). */
static inline int nashim_pidfd_open(pid_t pid) {
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    (void)pid;
    errno = ENOSYS;
    return -1;
#endif
}

/* waitid(P_PIDFD, pidfd, WEXITED | WNOHANG) (Linux 5.4): waits for that one child only. Returns 1 when it had
 * exited and is now reaped (*exit_code: its exit status, or -1 when a signal ended it), 0 while it runs, -1 with
 * errno otherwise (ECHILD: it was reaped already — by the kernel under SIGCHLD=SIG_IGN, or by the host). */
static inline int nashim_pidfd_reap(int pidfd, int *exit_code) {
    siginfo_t info;
    memset(&info, 0, sizeof info);
    if (waitid((idtype_t)3 /* P_PIDFD */, (id_t)pidfd, &info, WEXITED | WNOHANG) != 0) return -1;
    if (info.si_pid == 0) return 0;
    *exit_code = info.si_code == CLD_EXITED ? info.si_status : -1;
    return 1;
}

/* pidfd_send_signal(2) (Linux 5.1): signals the process pidfd refers to, never one that got its number later. 0, or
 * -1 with errno (ENOSYS on older kernels, ESRCH when it has exited). */
static inline int nashim_pidfd_send_signal(int pidfd, int sig) {
#ifdef SYS_pidfd_send_signal
    return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
#else
    (void)pidfd; (void)sig;
    errno = ENOSYS;
    return -1;
#endif
}

/* The kernel key retention service (keyctl(2), add_key(2)): glibc wraps neither, and syscall(2) is variadic. Each
 * returns what the system call returns (a key serial, a length, 0), or -1 with errno (ENOSYS on a kernel without
 * keys, EPERM/EACCES where a seccomp profile forbids them, as Docker's default one does). */
#include <stddef.h>
#include <stdint.h>
#include <linux/keyctl.h>

/* Permission bits of a key (include/linux/key.h; keyutils.h, which is not installed everywhere, has them too). */
#define NASHIM_KEY_POS_ALL 0x3f000000u
#define NASHIM_KEY_USR_ALL 0x003f0000u

/* KEYCTL_GET_PERSISTENT: the persistent keyring of uid (-1: this process's), linked into dest_keyring. */
static inline long nashim_keyctl_get_persistent(int32_t uid, int32_t dest_keyring) {
#ifdef SYS_keyctl
    return syscall(SYS_keyctl, KEYCTL_GET_PERSISTENT, (long)uid, (long)dest_keyring);
#else
    (void)uid; (void)dest_keyring;
    errno = ENOSYS;
    return -1;
#endif
}

/* KEYCTL_SEARCH: the key of type and description in keyring (and the keyrings it holds); not linked anywhere. */
static inline long nashim_keyctl_search(int32_t keyring, const char *type, const char *description) {
#ifdef SYS_keyctl
    return syscall(SYS_keyctl, KEYCTL_SEARCH, (long)keyring, type, description, 0L);
#else
    (void)keyring; (void)type; (void)description;
    errno = ENOSYS;
    return -1;
#endif
}

/* KEYCTL_READ: copies up to buffer_length bytes of key's payload into buffer; returns the payload's whole length. */
static inline long nashim_keyctl_read(int32_t key, void *buffer, size_t buffer_length) {
#ifdef SYS_keyctl
    return syscall(SYS_keyctl, KEYCTL_READ, (long)key, buffer, buffer_length);
#else
    (void)key; (void)buffer; (void)buffer_length;
    errno = ENOSYS;
    return -1;
#endif
}

/* KEYCTL_SETPERM: sets key's permission mask. */
static inline long nashim_keyctl_setperm(int32_t key, uint32_t permissions) {
#ifdef SYS_keyctl
    return syscall(SYS_keyctl, KEYCTL_SETPERM, (long)key, (unsigned long)permissions);
#else
    (void)key; (void)permissions;
    errno = ENOSYS;
    return -1;
#endif
}

/* KEYCTL_UNLINK: removes key from keyring. */
static inline long nashim_keyctl_unlink(int32_t key, int32_t keyring) {
#ifdef SYS_keyctl
    return syscall(SYS_keyctl, KEYCTL_UNLINK, (long)key, (long)keyring);
#else
    (void)key; (void)keyring;
    errno = ENOSYS;
    return -1;
#endif
}

/* add_key(2): creates the key of type and description in keyring, or updates the payload of the one already there. */
static inline long nashim_add_key(const char *type, const char *description, const void *payload, size_t length,
                                  int32_t keyring) {
#ifdef SYS_add_key
    return syscall(SYS_add_key, type, description, payload, length, (long)keyring);
#else
    (void)type; (void)description; (void)payload; (void)length; (void)keyring;
    errno = ENOSYS;
    return -1;
#endif
}

/* SO_PEERCRED (socket(7), unix(7)): the effective uid of the process at the other end of a connected Unix socket —
 * for a listening socket, of the process that called listen(2) (the kernel records it then; a later setuid of that
 * process changes nothing). 0 with *uid (and *pid) set, or -1 with errno. struct ucred needs _GNU_SOURCE, which
 * this header cannot define (the C library's headers are read first), so its layout is spelled out here. */
#include <sys/socket.h>
static inline int nashim_peer_uid(int fd, uint32_t *uid, int32_t *pid) {
    struct { int32_t pid; uint32_t uid; uint32_t gid; } credentials;
    socklen_t length = (socklen_t)sizeof credentials;
    memset(&credentials, 0, sizeof credentials);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return -1;
    if (length != (socklen_t)sizeof credentials) {
        errno = EPROTO;
        return -1;
    }
    *uid = credentials.uid;
    *pid = credentials.pid;
    return 0;
}
