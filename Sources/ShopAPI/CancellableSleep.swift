import Dispatch
import Synchronization

/// A sleep that, when cancelled, takes its timer back.
///
/// `Task.sleep` on Linux schedules a delayed job on libdispatch that cannot be withdrawn: cancelling
/// the task resumes it early, but the job still fires at the original deadline and wakes a worker
/// thread for nothing. Every request races a timeout timer, so an idle app woke once per request,
/// one timeout after the request had finished. A cancelled `DispatchSourceTimer` leaves the timer
/// list at once.
public enum CancellableSleep {
    public static func sleep(for duration: Duration) async throws {
        let sleep = OneSleep()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                sleep.start(nanoseconds: nanoseconds(duration), continuation: continuation)
            }
        } onCancel: {
            sleep.finish(with: .failure(CancellationError()))
        }
    }

    static func nanoseconds(_ d: Duration) -> Int {
        let (seconds, attoseconds) = d.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return Int(clamping: overflow ? .max : whole.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue)
    }
}

/// One sleep's timer and continuation; whichever of the timer and the cancellation comes first ends it.
private final class OneSleep: @unchecked Sendable {
    // @unchecked: `timer` is a DispatchSource (thread-safe by libdispatch's contract) and is set once,
    // before it is shared; everything else is behind `phase`.
    private let timer = DispatchSource.makeTimerSource(queue: .global())
    private let phase = Mutex<Phase>(.waiting)

    private enum Phase {
        case waiting
        case armed(CheckedContinuation<Void, any Error>)
        case done
    }

    func start(nanoseconds: Int, continuation: CheckedContinuation<Void, any Error>) {
        let armed = phase.withLock { current -> Bool in
            guard case .waiting = current else { return false }
            current = .armed(continuation)
            return true
        }
        guard armed else {  // cancelled before the timer was armed
            timer.cancel()
            timer.resume()  // libdispatch must not release a source that was never resumed
            continuation.resume(throwing: CancellationError())
            return
        }
        timer.setEventHandler { [self] in finish(with: .success(())) }
        timer.schedule(deadline: .now() + .nanoseconds(nanoseconds), leeway: .milliseconds(1))
        timer.resume()
    }

    func finish(with result: Result<Void, any Error>) {
        let continuation = phase.withLock { current -> CheckedContinuation<Void, any Error>? in
            switch current {
            case .waiting:
                current = .done
                return nil
            case .armed(let continuation):
                current = .done
                return continuation
            case .done:
                return nil
            }
        }
        guard let continuation else { return }
        timer.cancel()
        continuation.resume(with: result)
    }
}
