import Foundation
import JSONTokens
import ShopAPI
import ShopCache
import ShopCompare

/// The pins of one environment (`P` on the Requests tab, `reiterate-shop pins`), kept in the state
/// folder (`pins/ENV.json`, 0600), and the check every answer of the session meets: an answer that
/// differs from the one pinned for its request, under the ignore rules, is a finding `pinned`.
public actor PinStore: AnswerPins {
    public nonisolated let path: String?
    let ignore: IgnoreRules
    public private(set) var book: PinBook
    /// Why the file could not be read, if it could not (its pins are then not checked, and not lost:
    /// the file is not written over until a pin is added or removed).
    public nonisolated let unreadable: String?

    public init(path: String?, ignore: IgnoreRules = IgnoreRules()) {
        self.path = path
        self.ignore = ignore
        var book = PinBook()
        var problem: String?
        if let path, let data = FileManager.default.contents(atPath: path) {
            do {
                book = try PinBook.read(Array(data))
            } catch {
                problem = "\(path): \(error)"
            }
        }
        self.book = book
        unreadable = problem
    }

    /// `STATE/pins/ENV.json`; the environment's name kept to letters, digits, `.`, `_` and `-`.
    public static func path(stateDirectory: String, environment: String) -> String {
        "\(stateDirectory)/pins/\(Snapshot.fileSafe(environment)).json"
    }

    public var requests: Set<RequestKey> { Set(book.pins.map(\.request)) }

    /// The last answer reported per pinned request: the same difference again (a watch reads the
    /// balance twice a round) is not a new finding.
    private var reported: [RequestKey: JSONValue] = [:]

    public func check(_ key: RequestKey, status: Int, body: [UInt8], tokens: [JSONToken]) -> [Finding] {
        let request = key
        guard status / 100 == 2, let pin = book[request] else { return [] }
        // Compared as it was pinned: token-like keys redacted.
        let answer = JSONValue.parse(Redactor.redacted(body, tokens: tokens))
        let differences = pin.differences(from: answer, ignore: ignore, dates: { ISO8601.parse($0) })
        guard !differences.isEmpty else {
            reported[request] = nil
            return []
        }
        if let answer, reported[request] == answer { return [] }
        reported[request] = answer
        return [Finding(check: .pinned, expected: "the answer pinned \(DiffReport.stamp(pin.pinnedAt))\(pin.requestID.map { " (request id \($0))" } ?? "")",
                        actual: DiffReport.summary(differences) + " — " + DiffReport.brief(differences))]
    }

    public func add(_ pin: Pin) throws {
        var next = book
        next.add(pin)
        try save(next)
        book = next
    }

    /// Removes the pin of `request` (all of them with nil); answers how many went.
    @discardableResult
    public func remove(_ request: RequestKey?) throws -> Int {
        var next = book
        let before = next.pins.count
        if let request { next.remove(request) } else { next = PinBook() }
        try save(next)
        book = next
        return before - next.pins.count
    }

    func save(_ book: PinBook) throws {
        guard let path else { return }
        let folder = (path as NSString).deletingLastPathComponent
        try AtomicFile.ensureDirectory(folder)
        try AtomicFile.write(Data(book.encoded()), to: path, directory: folder)
    }
}

/// Why a pin could not be made, in words.
public struct PinError: Error, Equatable, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
}
