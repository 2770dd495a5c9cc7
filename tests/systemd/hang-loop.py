#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Hang xdsd's event loop, and nothing else, for the watchdog test.

    hang-loop.py PID

xdsd runs its event loop on its main thread (whose id is the process
id): this stops that one thread with ptrace (PTRACE_SEIZE, then
PTRACE_INTERRUPT) while gRPC's threads run on, as a callback that never
returns would. Prints "stopped" once it is, then waits: a signal sent
to the process that stops the thread on its way (systemd's SIGABRT from
the watchdog, say) is delivered as it was sent, and the thread is
stopped again if it survives it; when the process is gone, or after 5
minutes, it exits.
"""
import ctypes
import os
import signal
import sys

PTRACE_CONT = 7
PTRACE_SEIZE = 0x4206
PTRACE_INTERRUPT = 0x4207
PTRACE_EVENT_STOP = 128
WALL = 0x40000000

libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]


def ptrace(request, tid, data=0):
    if libc.ptrace(request, tid, None, ctypes.c_void_p(data)) != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))


def main():
    tid = int(sys.argv[1])
    ptrace(PTRACE_SEIZE, tid)
    ptrace(PTRACE_INTERRUPT, tid)
    said = False
    signal.alarm(300)  # its default action ends this, and the hang
    while True:
        try:
            _, status = os.waitpid(tid, WALL)
        except ChildProcessError:
            return 0  # gone
        if os.WIFEXITED(status) or os.WIFSIGNALED(status):
            print("gone", flush=True)
            return 0
        if not os.WIFSTOPPED(status):
            continue
        if status >> 16 == PTRACE_EVENT_STOP:
            if not said:
                print("stopped", flush=True)
            said = True
            continue  # stays stopped: the loop hangs
        # a signal on its way to the thread: delivered, then stopped
        # again (a fatal one ends the process)
        ptrace(PTRACE_CONT, tid, os.WSTOPSIG(status))
        ptrace(PTRACE_INTERRUPT, tid)


if __name__ == "__main__":
    sys.exit(main())
