import Foundation
import JSONTokens
import ShopAPI
import ShopModel
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
    /// The answers in a row that differed from the pin, per request, since it last matched or was
    /// judged (at most 3): a difference is a finding only once two answers in a row agree on it.
    private var differing: [RequestKey: [(answer: JSONValue?, requestID: String?)]] = [:]
    /// Reads `confirm` made of a request since an answer to it came from elsewhere (at most 2: the
    /// bound holds whatever the answers are, a server that fails or keeps flipping included).
    private var confirmReads: [RequestKey: Int] = [:]
    /// The requests `confirm` is reading now (their answers are its own, not from elsewhere).
    private var confirming: Set<RequestKey> = []

    /// Pinned requests whose last answer differed and is not yet settled, and that `confirm` may still
    /// read again (two reads at most after an answer from elsewhere).
    public var unsettled: [RequestKey] {
        differing.compactMap { key, answers in
            guard book[key] != nil, let last = answers.last, (confirmReads[key] ?? 0) < 2 else { return nil }
            let settled = answers.count >= 2 && answers[answers.count - 2].answer == last.answer
            return settled || (last.answer.map { reported[key] == $0 } ?? false) ? nil : key
        }.sorted { $0.description < $1.description }
    }

    public func check(_ key: RequestKey, status: Int, body: [UInt8], tokens: [JSONToken], requestID: String?) -> [Finding] {
        let request = key
        guard status / 100 == 2, let pin = book[request] else { return [] }
        if !confirming.contains(request) { confirmReads[request] = 0 }  // an answer from elsewhere: confirm may read again
        // Compared as it was pinned: token-like keys redacted.
        let answer = JSONValue.parse(Redactor.redacted(body, tokens: tokens))
        let differences = pin.differences(from: answer, ignore: ignore, dates: { ISO8601.parse($0) })
        guard !differences.isEmpty else {
            reported[request] = nil
            differing[request] = nil
            return []
        }
        var answers = (differing[request] ?? []) + [(answer, requestID)]
        if answers.count > 3 { answers.removeFirst(answers.count - 3) }
        differing[request] = answers
        if let answer, reported[request] == answer { return [] }
        let agrees = answers.count >= 2 && answers[answers.count - 2].answer == answer
        guard agrees else {
            // Three answers in a row, each unlike the one before: not judged, told once, and the reading
            // starts afresh.
            guard answers.count == 3, answers[0].answer != answers[1].answer else { return [] }
            differing[request] = nil
            let ids = answers.map { $0.requestID ?? "—" }.joined(separator: ", ")
            return [Finding(check: .readsDisagree, expected: "two answers in a row that agree, to judge the pin of \(request)",
                            actual: "\(answers.count) answers, each unlike the one before (request ids \(ids)): the pin is not judged")]
        }
        // Judged: the next answer is held against this one (a later change is a difference of its own).
        reported[request] = answer
        differing[request] = [(answer, requestID)]
        let ids = answers.suffix(2).map { $0.requestID ?? "—" }.joined(separator: ", ")
        return [Finding(check: .pinned, expected: "the answer pinned \(DiffReport.stamp(pin.pinnedAt))\(pin.requestID.map { " (request id \($0))" } ?? "")",
                        actual: DiffReport.summary(differences) + " — " + DiffReport.brief(differences) + " (the same in two answers in a row: \(ids))")]
    }

    /// Reads each pinned request whose difference is not settled again, after the one rule's pauses
    /// (`ReadSeries.pauses`: 0.5 s, then 1 s) while it is still unsettled: the answers go through the pipeline, where `check` judges them.
    /// `read` sends one read (the pin's request); two reads a request at most, counted across calls
    /// until an answer comes from elsewhere.
    public func confirm(reading read: @Sendable (RequestKey) async -> Void) async {
        for seconds in ReadSeries<Int>.pauses {
            let keys = unsettled
            guard !keys.isEmpty else { return }
            do { try await Task.sleep(for: .milliseconds(Int(seconds * 1000))) } catch { return }
            for key in keys where unsettled.contains(key) {
                confirmReads[key, default: 0] += 1
                confirming.insert(key)
                await read(key)
                confirming.remove(key)
            }
        }
    }

    /// What is held of a request's answers, forgotten when its pin changes.
    private func forget(_ request: RequestKey?) {
        if let request {
            (differing[request], reported[request], confirmReads[request]) = (nil, nil, nil)
        } else {
            (differing, reported, confirmReads) = ([:], [:], [:])
        }
    }

    public func add(_ pin: Pin) throws {
        var next = book
        next.add(pin)
        try save(next)
        book = next
        forget(pin.request)
    }

    /// Removes the pin of `request` (all of them with nil); answers how many went.
    @discardableResult
    public func remove(_ request: RequestKey?) throws -> Int {
        var next = book
        let before = next.pins.count
        if let request { next.remove(request) } else { next = PinBook() }
        try save(next)
        book = next
        forget(request)
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
