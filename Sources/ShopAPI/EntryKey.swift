import Foundation
import JSONTokens

/// Who a history entry is, wherever one is held: on the History tab (its comments shown, the cursor's
/// entry found again when pages shift, find's matches, the watch's news) and in `compare` (the history
/// list diffed by key). One identity for both: the entry's `id`; for an entry sent without one, its
/// date, product, amount and creator, each as its JSON text.
public enum EntryKey: Hashable, Sendable, CustomStringConvertible {
    case id(String)
    /// An entry without an id.
    case fields(date: String, product: String, amount: String, creator: String)
    /// A row that could not be read and has no id: its place on its page and why it was not read.
    case unreadable(index: Int, reason: String)

    /// A decoded entry's key: the same as its JSON's (`init(json:)`) when its date is written as the
    /// shop writes dates (`2026-11-20T18:04:11Z`).
    public init(_ entry: CheerHistoryEntry) {
        if let id = entry.id {
            self = .id(id)
        } else {
            self = .fields(date: ISO8601.format(entry.date), product: entry.product, amount: String(entry.amount), creator: entry.creator)
        }
    }

    public init(_ item: HistoryItem) {
        switch item {
        case let .entry(e): self.init(e)
        case let .unreadable(u): self = u.id.map(EntryKey.id) ?? .unreadable(index: u.index, reason: u.reason)
        }
    }

    /// An entry as the server sent it (a history list compared, which may hold what does not decode):
    /// nil for what is not an object.
    public init?(json: JSONValue) {
        guard case let .object(o) = json else { return nil }
        if case let .string(id)? = o["id"] {
            self = .id(id)
            return
        }
        func text(_ field: String) -> String { o[field].map(Self.text) ?? "" }
        self = .fields(date: text("date"), product: text("product"), amount: text("amount"), creator: text("creator"))
    }

    /// A field's value as text: a string as it is, a number or literal as written, `…` for a list or object.
    public static func text(_ v: JSONValue) -> String {
        switch v {
        case let .string(s): return s
        case let .int(n): return String(n)
        case let .double(d): return String(d)
        case let .bool(b): return String(b)
        case .null: return "null"
        case .array, .object: return "…"
        }
    }

    /// How a compare's paths name the entry: `id=…`, or `date|product|amount|creator`.
    public var description: String {
        switch self {
        case let .id(id): return "id=" + id
        case let .fields(date, product, amount, creator): return [date, product, amount, creator].joined(separator: "|")
        case let .unreadable(index, reason): return "#\(index)|\(reason)"
        }
    }
}
