import Foundation
import JSONTokens
import ShopAPI

/// One read kept as the server answered it: what it was, the request line, the request id, the
/// status, when, and the body as JSON values.
public struct RecordedRead: Sendable, Equatable {
    public enum What: Sendable, Equatable, Hashable {
        case balance
        case packs
        case history(page: Int)

        /// What a request reads (nil: not a read this tool compares).
        public init?(key: RequestKey) {
            guard let what = RecordedRead.what(key) else { return nil }
            self = what
        }
    }

    public var what: What
    public var method: String
    /// Path and query (`/api/v1/balance?user_id=qa-alice`).
    public var target: String
    public var requestID: String?
    public var status: Int
    public var at: Date?
    public var body: JSONValue?

    public init(what: What, method: String = "GET", target: String, requestID: String?, status: Int, at: Date?, body: JSONValue?) {
        self.what = what
        self.method = method
        self.target = target
        self.requestID = requestID
        self.status = status
        self.at = at
        self.body = body
    }

    /// What a GET of `target` (as a file spells it) reads (nil: not a read this tool compares).
    public static func what(method: String, target: String) -> What? {
        RequestKey(method: method.uppercased(), target: target).flatMap(What.init(key:))
    }

    /// A request key as the read it is: the paths as the endpoint types write them (once).
    static func what(_ key: RequestKey) -> What? {
        switch key.operation {
        case .getBalance: return .balance
        case .listAudioPacks: return .packs
        case .getCheerHistory: return .history(page: key.value("page").flatMap { Int($0) } ?? 1)
        default: return nil
        }
    }

    static func query(_ query: String, _ name: String) -> String? {
        for pair in query.split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1)
            if kv.first.map(String.init) == name { return kv.count > 1 ? String(kv[1]).removingPercentEncoding : "" }
        }
        return nil
    }

    /// The user a read was for (its `user_id`).
    public var user: String? {
        let parts = target.split(separator: "?", maxSplits: 1)
        return parts.count > 1 ? Self.query(String(parts[1]), "user_id") : nil
    }
}

/// A POST found in a recording: listed by `replay`, never sent.
public struct RecordedWrite: Sendable, Equatable {
    public var method: String
    public var target: String
    public var requestID: String?
}

/// What one user saw, saved: `reiterate-shop snapshot`, `S` in the TUI, or a HAR file written by
/// `--har` read as one. The file is JSON: the environment, the user, the time, and each read with its
/// request and request id. Tokens never go in (reads are GETs; the base URL loses any user info).
public struct Snapshot: Sendable, Equatable {
    public static let format = 1

    public var environment: String?
    public var baseURL: String?
    public var user: String?
    public var takenAt: Date?
    public var reads: [RecordedRead]
    /// Writes a HAR held (a snapshot holds none).
    public var writes: [RecordedWrite] = []
    /// Reads a HAR held whose body it cut short (its preview limit): not comparable.
    public var cut: [String] = []

    public init(environment: String?, baseURL: String?, user: String?, takenAt: Date?, reads: [RecordedRead]) {
        self.environment = environment
        self.baseURL = baseURL.map(Self.withoutUserInfo)
        self.user = user
        self.takenAt = takenAt
        self.reads = reads
    }

    public struct Unreadable: Error, Equatable, Sendable, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }
    }

    /// The snapshot's user's balance read, the packs read, and one series of history pages (the page
    /// size of its first page 1; a HAR of a session also holds the watch's and the find's pages, and
    /// other users' after a switch): the last read of each.
    public var balance: RecordedRead? { reads.last { $0.what == .balance && $0.status / 100 == 2 && isUsers($0) } }
    public var packs: RecordedRead? { reads.last { $0.what == .packs && $0.status / 100 == 2 } }
    public var historyPages: [RecordedRead] {
        let history = reads.filter { read in
            if case .history = read.what { return read.status / 100 == 2 && isUsers(read) }
            return false
        }
        let size = history.first { $0.what == .history(page: 1) }.map(Self.perPage) ?? history.first.map(Self.perPage)
        var byPage: [Int: RecordedRead] = [:]
        for read in history where Self.perPage(read) == size {
            if case let .history(page) = read.what { byPage[page] = read }
        }
        return byPage.keys.sorted().compactMap { byPage[$0] }
    }

    /// Page `n` of `historyPages` (nil when the file has none: a gap ends the history read).
    public func historyPage(_ n: Int) -> RecordedRead? { historyPages.first { $0.what == .history(page: n) } }

    func isUsers(_ read: RecordedRead) -> Bool { user == nil || read.user == nil || read.user == user }

    public static func perPage(_ read: RecordedRead) -> Int? {
        let parts = read.target.split(separator: "?", maxSplits: 1)
        return parts.count > 1 ? RecordedRead.query(String(parts[1]), "per_page").flatMap(Int.init) : nil
    }

    // MARK: Reading

    /// A snapshot file, or a HAR 1.2 file (told apart by their contents).
    public static func read(_ bytes: [UInt8]) throws -> Snapshot {
        guard case let .object(root)? = JSONValue.parse(bytes) else { throw Unreadable(reason: "it is not JSON") }
        if case .object? = root["log"] { return try har(root) }
        guard case let .int(format)? = root["reiterate_snapshot"] else {
            throw Unreadable(reason: "it is neither a snapshot of reiterate-shop nor a HAR file")
        }
        guard format == Self.format else { throw Unreadable(reason: "it is a snapshot of format \(format); this version reads format \(Self.format)") }
        var reads: [RecordedRead] = []
        if case let .array(items)? = root["reads"] {
            for item in items {
                guard case let .object(o) = item, case let .string(method)? = o["method"], case let .string(target)? = o["target"],
                      let what = RecordedRead.what(method: method, target: target) else { continue }
                reads.append(RecordedRead(what: what, method: method, target: target, requestID: string(o["request_id"]),
                                          status: int(o["status"]) ?? 0, at: string(o["at"]).flatMap(Stamp.date), body: o["body"]))
            }
        }
        return Snapshot(environment: string(root["environment"]), baseURL: string(root["base_url"]), user: string(root["user"]),
                        takenAt: string(root["taken_at"]).flatMap(Stamp.date), reads: reads)
    }

    /// A HAR file, read by the one HAR reader (`HAR.read`): the reads this tool compares, the writes among
    /// them (named, never sent again), and the 2xx answers whose bodies do not parse (cut short).
    static func har(_ root: JSONObject) throws -> Snapshot {
        let recording: HAR.Recording
        do { recording = try HAR.read(root) } catch { throw Unreadable(reason: error.reason) }
        var reads: [RecordedRead] = []
        var writes: [RecordedWrite] = []
        var cut: [String] = []
        for e in recording.entries {
            let status = e.status ?? 0
            let body = e.responseBody.flatMap { JSONValue.parse(Array($0.utf8)) }
            if e.responseBody != nil, body == nil, status / 100 == 2 { cut.append("\(e.method) \(e.target)") }
            if let key = e.key, let what = RecordedRead.What(key: key) {
                if body == nil, status / 100 == 2 { continue }
                reads.append(RecordedRead(what: what, method: e.method, target: e.target, requestID: e.requestID, status: status, at: e.startedAt, body: body))
            } else if e.method != "GET" {
                writes.append(RecordedWrite(method: e.method, target: e.target, requestID: e.requestID))
            }
        }
        var snapshot = Snapshot(environment: nil, baseURL: recording.baseURL, user: reads.lazy.compactMap(\.user).first, takenAt: reads.first?.at, reads: reads)
        snapshot.writes = writes
        snapshot.cut = cut
        return snapshot
    }

    /// A name kept to letters, digits, `.`, `_` and `-` (the rest `_`): an environment's or a user's,
    /// in a file name.
    public static func fileSafe(_ name: String) -> String {
        let safe = String(name.map { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) ? $0 : "_" })
        return safe.isEmpty ? "_" : safe
    }

    static func withoutUserInfo(_ url: String) -> String {
        guard let scheme = url.range(of: "://") else { return url }
        let rest = url[scheme.upperBound...]
        let hostEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        guard let at = rest[..<hostEnd].lastIndex(of: "@") else { return url }
        return String(url[..<scheme.upperBound]) + String(rest[rest.index(after: at)...])
    }

    static func string(_ v: JSONValue?) -> String? { if case let .string(s)? = v { return s } else { return nil } }
    static func int(_ v: JSONValue?) -> Int? { if case let .int(n)? = v { return n } else { return nil } }

    // MARK: Writing

    /// The snapshot as its file holds it: one JSON object, a read a line.
    public func encoded() -> [UInt8] {
        func text(_ s: String?) -> JSONValue { s.map(JSONValue.string) ?? .null }
        let head: JSONObject = ["reiterate_snapshot": .int(Self.format), "environment": text(environment), "base_url": text(baseURL),
                                "user": text(user), "taken_at": text(takenAt.map(Stamp.text))]
        var w = JSONWriter(capacity: 4096)
        w.raw("{")
        w.members(of: head)
        w.raw(",\"reads\":[")
        for (i, read) in reads.enumerated() {
            w.raw(i == 0 ? "\n" : ",\n")
            w.value(.object(["method": .string(read.method), "target": .string(read.target), "request_id": text(read.requestID),
                             "status": .int(read.status), "at": text(read.at.map(Stamp.text)), "body": read.body ?? .null]))
        }
        w.raw("\n]}\n")
        return w.bytes
    }
}

/// Times as the files write them: ISO 8601 in UTC with milliseconds.
public enum Stamp {
    public static func text(_ date: Date) -> String {
        date.formatted(.iso8601.year().month().day().dateSeparator(.dash).time(includingFractionalSeconds: true).timeSeparator(.colon).timeZone(separator: .omitted))
    }

    @Sendable public static func date(_ text: String) -> Date? {
        if let d = try? Date(text, strategy: .iso8601.year().month().day().dateSeparator(.dash).time(includingFractionalSeconds: true).timeSeparator(.colon).timeZone(separator: .omitted)) { return d }
        return try? Date(text, strategy: .iso8601)
    }
}

extension RecordedRead {
    /// A live read as the read it is (what `compare`, `snapshot` and `replay` keep of an answer).
    public init<V>(_ r: Recorded<V>, as what: What) {
        self.init(what: what, method: r.method, target: r.target, requestID: r.requestID, status: r.status, at: r.at, body: r.document)
    }
}
