/// When a failed GET is tried again. POSTs (purchase, spend, refresh) are never retried by the client.
public struct RetryPolicy: Sendable, Equatable {
    /// Attempts in all, the first included.
    public var maxAttempts: Int
    /// Backoff before the second attempt; doubles each time, with jitter.
    public var baseDelay: Duration
    /// No single wait is longer; a `Retry-After` above it is not waited for (the error surfaces).
    public var maxDelay: Duration
    /// Attempts and waits together stay within this.
    public var maxTotal: Duration
    public var retryableStatuses: Set<Int>

    public init(
        maxAttempts: Int = 3, baseDelay: Duration = .milliseconds(250), maxDelay: Duration = .seconds(5),
        maxTotal: Duration = .seconds(20), retryableStatuses: Set<Int> = [408, 429, 500, 502, 503, 504]
    ) {
        self.maxAttempts = maxAttempts
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.maxTotal = maxTotal
        self.retryableStatuses = retryableStatuses
    }

    public static let none = RetryPolicy(maxAttempts: 1)

    /// The wait before attempt `attempt + 1`, or nil when no further attempt should be made.
    /// - Parameters:
    ///   - attempt: attempts made so far (1 after the first).
    ///   - retryAfter: the server's `Retry-After`, honoured exactly when present.
    ///   - elapsed: time spent so far on this call.
    ///   - random: a number in [0, 1) for the jitter.
    public func delay(afterAttempt attempt: Int, retryAfter: Duration?, elapsed: Duration, random: Double) -> Duration? {
        guard attempt < maxAttempts else { return nil }
        let wait: Duration
        if let retryAfter {
            guard retryAfter <= maxDelay else { return nil }
            wait = retryAfter
        } else {
            // "Equal jitter": half the exponential step fixed, half random, so waits never collapse to 0.
            let step = min(maxDelay, baseDelay * Int(1 << min(attempt - 1, 20)))
            wait = step / 2 + step / 2 * random
        }
        guard elapsed + wait < maxTotal else { return nil }
        return wait
    }
}
