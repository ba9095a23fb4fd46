/* CLinux: Linux system calls the C library does not wrap for Swift (syscall(2) is variadic; siginfo_t's fields are
 * macros over unions). Header-only; prefix nashim_. */
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

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
