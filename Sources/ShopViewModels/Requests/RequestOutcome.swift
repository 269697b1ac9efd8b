import ShopAPI

/// How a request in the exchange log ended, as the Requests tab's CODE column says it: a request the
/// app withdrew (a page scrolled away, a user switched, a refresh that replaced it) is `cancelled`,
/// not an error of the server's or the network's.
public enum RequestOutcome: Equatable, Sendable {
    /// Sent, no answer yet.
    case pending
    /// An HTTP answer came (any status).
    case answered(status: Int)
    /// The app cancelled it before it was done (whatever had arrived by then).
    case cancelled
    /// No usable answer: the connection failed, timed out, or the answer was cut short.
    case failed

    public init(_ e: Exchange) {
        if e.isPending {
            self = .pending
        } else if e.failure == .cancelled {
            self = .cancelled
        } else if e.failure == nil, let status = e.status {
            self = .answered(status: status)
        } else {
            self = .failed
        }
    }

    /// The CODE column's text: `200`, `cancelled`, `ERR`, `…`.
    public var code: String {
        switch self {
        case .pending: "…"
        case let .answered(status): String(status)
        case .cancelled: "cancelled"
        case .failed: "ERR"
        }
    }

    /// Whether the row is shown as a failure (a status of 400 or more, or no answer).
    public var isFailure: Bool {
        switch self {
        case let .answered(status): status >= 400
        case .failed: true
        case .pending, .cancelled: false
        }
    }
}

/// Where an item stood in the answer it came in, written as the watchdog's `warning:` lines and the
/// Checks tab write it: the JSON path, counted from 0 (`packs[7]`, `history[2]`). The screen, `print`
/// and the findings use this one numbering, so a row on screen matches its warning.
public enum ItemPosition {
    /// `packs[7]`.
    public static func pack(_ u: UnreadableEntry) -> String { "packs[\(u.index)]" }

    /// `history[2] of page 3` (the page when known: a warning names it in its request's query).
    public static func historyEntry(_ u: UnreadableEntry, page: Int?) -> String {
        "history[\(u.index)]" + (page.map { " of page \(Wording.grouped($0))" } ?? "")
    }
}
