/* The sandbox ("pause") container of every pod: it holds the pod's namespaces open and, as
 * PID 1 of a pod that shares its process namespace, reaps orphans. It sleeps in pause(2) and
 * exits 0 on SIGINT or SIGTERM, which is how containerd stops a sandbox. */
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static void stop(int signal_number) {
    (void)signal_number;
    _exit(0);
}

static void reap(int signal_number) {
    (void)signal_number;
    int saved = errno; /* a handler must not change errno under the interrupted code */
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
    errno = saved;
}

static int on(int signal_number, void (*handler)(int), int flags) {
    struct sigaction action = {.sa_handler = handler, .sa_flags = flags};
    sigemptyset(&action.sa_mask);
    return sigaction(signal_number, &action, NULL);
}

int main(void) {
    if (on(SIGINT, stop, 0) != 0 || on(SIGTERM, stop, 0) != 0 ||
        on(SIGCHLD, reap, SA_NOCLDSTOP | SA_RESTART) != 0) {
        static const char message[] = "pause: cannot install signal handlers\n";
        (void)!write(2, message, sizeof message - 1);
        return 1;
    }
    for (;;) {
        pause();
    }
}
