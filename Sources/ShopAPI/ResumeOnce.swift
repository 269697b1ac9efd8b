import Synchronization

/// Resumes a continuation exactly once, whichever comes first: the result or a cancellation
/// (which may even arrive before the continuation is installed).
final class ResumeOnce<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var pending: Result<T, any Error>?
        var done = false
    }

    private let state = Mutex(State())

    func install(_ continuation: CheckedContinuation<T, any Error>) {
        let early: Result<T, any Error>? = state.withLock { s in
            if let pending = s.pending {
                s.done = true
                return pending
            }
            s.continuation = continuation
            return nil
        }
        if let early { continuation.resume(with: early) }
    }

    func resume(with result: Result<T, any Error>) {
        let continuation: CheckedContinuation<T, any Error>? = state.withLock { s in
            guard !s.done else { return nil }
            guard let c = s.continuation else {
                if s.pending == nil { s.pending = result }
                return nil
            }
            s.done = true
            s.continuation = nil
            return c
        }
        continuation?.resume(with: result)
    }
}
