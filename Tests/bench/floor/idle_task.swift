// Platform floor for idle wake-ups (make bench): one task on Swift's global executor (libdispatch's
// worker pool on Linux), then nothing, as an app waiting for a key. On Linux libdispatch has no kernel
// workqueue and checks its pool from a 1 Hz timer on its manager thread, in every Swift program that
// has used the pool. Built by Tests/bench/benchlib.py with `swiftc -O`.
import Dispatch

Task.detached { print("waiting") }
dispatchMain()
