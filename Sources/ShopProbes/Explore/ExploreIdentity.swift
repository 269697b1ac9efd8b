import Foundation
import JSONTokens
import ShopAPI
import ShopModel
import ShopViewModels
import TerminalText

// Text written and read back byte for byte, and the identity and framing of what the server answers.

extension ExploreRun {
    // MARK: Text written and read back

    func roundTrip(_ c: ExploreCase, field: String, text: String, facts: Facts) async throws -> ExploreOutcome {
        guard let writer else { return ExploreOutcome(c, .notJudged, note: "not sent: no explore user") }
        let before = try await settledPage(writer)
        guard let known = before.value else { return ExploreOutcome(c, .notJudged, note: "not judged: the history before did not settle") }
        let (json, _) = body(.spend(.literal(1), comment: text), facts: facts, transactions: [:], balance: 1)
        await last.set(nil)  // the balance is not read here: the next case's reads are not held to a guess
        let answer: ProbeAnswer
        do { answer = try await wire.send(.spendCheer, query: [("user_id", writer)], json: json) } catch let error as ShopAPIError {
            // The answer was lost: what became of the write is settled by reading, never by sending it again.
            let after = try await settledPage(writer)
            let took = after.value.map { !Self.fresh($0, since: known).isEmpty }
            return ExploreOutcome(c, .notJudged, note: "not judged: " + ErrorText.line(error) + "; read again, the write "
                                    + (took.map { $0 ? "was applied" : "was not applied" } ?? "is not known (the reads did not settle)"))
        }
        let subject = "\(field) written by a spend of 1, as \(writer)"
        guard answer.isSuccess else {
            if answer.status == 402 { return ExploreOutcome(c, .notJudged, note: "not judged: the explore user's balance is 0") }
            if answer.status >= 500 { return ExploreOutcome(c, .notJudged, note: "not judged: answered \(Answer(answer).said)") }
            return ExploreOutcome(c, .finding, findings: [finding(c, .legalRefused, subject: subject, expected: "taken (2xx): any string is a legal \(field) (\(c.source))",
                                                                  actual: Answer(answer).said, ids: [answer.requestID])])
        }
        func fresh(_ entries: [CheerHistoryEntry]) -> CheerHistoryEntry? { Self.fresh(entries, since: known).first }
        let after = try await settledPage(writer) { fresh($0) != nil }
        guard let entries = after.value else {
            return ExploreOutcome(c, .finding, findings: [finding(c, .answersDisagree, subject: subject + ": the first page after", expected: "two reads that agree",
                                                                  actual: after.disagreed?.joined(separator: ", then ") ?? "unread", ids: [answer.requestID] + after.ids)])
        }
        let lag = after.lagged.map {
            ShopFinding(kind: .contract(.staleRead), subject: subject + ": the first page after", blame: .server, expected: "reads that show the new entry",
                        actual: $0.joined(separator: ", then ") + ", then the entry", requestIDs: after.ids.compactMap { $0 })
        }
        guard let entry = fresh(entries) else {
            return ExploreOutcome(c, .finding, findings: [finding(c, .textChanged, subject: subject, expected: "a new entry holding the \(field)",
                                                                  actual: "no new entry on the first page", ids: [answer.requestID] + after.ids)])
        }
        if let id = entry.id, let date = answer.serverDate { await last.wrote(id, within: date...date) }
        let got = entry.comments?.first?.body
        guard let got, Array(got.utf8) == Array(text.utf8) else {
            let (sent, back, at) = TextDifference.shown(text, got)
            let notUTF8 = after.notUTF8
            return ExploreOutcome(c, .finding, findings: [finding(c, .textChanged, subject: subject + " (entry \(entry.id ?? "without id"))",
                                                                  expected: "the bytes sent: \(sent)", actual: "\(back)\(at)", ids: [answer.requestID] + after.ids,
                                                                  causedBy: notUTF8 ? "possibly caused by the answer's body not being UTF-8 (charset)" : nil)] + (lag.map { [$0] } ?? []))
        }
        if let lag { return ExploreOutcome(c, .finding, findings: [lag]) }
        return ExploreOutcome(c, .passed)
    }

    // MARK: Identity and framing

    func identity(_ c: ExploreCase, _ check: ExploreIdentity, facts: Facts) async throws -> ExploreOutcome {
        let user = writer ?? reader
        switch check {
        case .uniqueIDs:
            let bound = 20
            var seen: [String: [Int]] = [:]
            var ids: [String?] = []
            var pages = 1
            var total = 1
            while pages <= min(total, bound) {
                let a = try await wire.send(.getCheerHistory, query: [("user_id", user), ("page", String(pages)), ("per_page", String(CheerHistory.maxPerPage))])
                ids.append(a.requestID)
                guard a.isSuccess, let page = try? CheerHistory.decode(a.body) else { return ExploreOutcome(c, .notJudged, note: "not judged: page \(pages) answered \(Answer(a).said)") }
                total = page.totalPages
                for id in page.entries.compactMap(\.id) { seen[id, default: []].append(pages) }
                pages += 1
            }
            let twice = seen.filter { $0.value.count > 1 }.sorted { $0.key < $1.key }
            let note = total > bound ? "read \(bound) of \(total) pages (the bound): ids beyond them not seen" : "\(seen.count) ids on \(pages - 1) page\(pages == 2 ? "" : "s")"
            guard !twice.isEmpty else { return ExploreOutcome(c, .passed, note: note) }
            // Read once more every page a repeated id was on: a verdict rests on reads that agree.
            var again: [String: Int] = [:]
            for p in Set(twice.flatMap(\.value)).sorted() {
                let a = try await wire.send(.getCheerHistory, query: [("user_id", user), ("page", String(p)), ("per_page", String(CheerHistory.maxPerPage))])
                ids.append(a.requestID)
                guard a.isSuccess, let page = try? CheerHistory.decode(a.body) else {
                    return ExploreOutcome(c, .notJudged, note: "not judged: page \(p), read again, answered \(Answer(a).said)")
                }
                for id in page.entries.compactMap(\.id) { again[id, default: 0] += 1 }
            }
            let confirmed = twice.filter { id, _ in (again[id] ?? 0) > 1 }
            guard !confirmed.isEmpty else {
                return ExploreOutcome(c, .finding, findings: [ShopFinding(kind: .explore(.answersDisagree), subject: "the history of \(user)", blame: .unknown,
                                                                          expected: "two reads of a page that agree", actual: "ids on two entries once, not when read again",
                                                                          requestIDs: ids.compactMap { $0 }, causedBy: "a write between the reads shifts the pages (another tester's), or the server")])
            }
            let words = confirmed.prefix(3).map { "\($0.key) on page\($0.value.count > 1 && Set($0.value).count > 1 ? "s" : "") \(Array(Set($0.value)).sorted().map(String.init).joined(separator: ", "))" }
            return ExploreOutcome(c, .finding, findings: [finding(c, .duplicateID, subject: "the history of \(user)", expected: "each id on one entry",
                                                                  actual: "\(confirmed.count) id\(confirmed.count == 1 ? "" : "s") on two entries: " + words.joined(separator: "; "),
                                                                  ids: ids)], note: note)
        case .stableEntries:
            try await wire.take(2)
            let query: [(name: String, value: String)] = [("user_id", user), ("page", "1"), ("per_page", "50")]
            let a = try await wire.send(.getCheerHistory, query: query, taken: true)
            let b = try await wire.send(.getCheerHistory, query: query, taken: true)
            guard let x = try? CheerHistory.decode(a.body).entries, let y = try? CheerHistory.decode(b.body).entries, a.isSuccess, b.isSuccess else {
                return ExploreOutcome(c, .notJudged, note: "not judged: the first page answered \(Answer(a).said), then \(Answer(b).said)")
            }
            // Only ids that name one entry on each read are compared (an id on two entries is the unique-ids case's).
            func once(_ list: [CheerHistoryEntry]) -> [String: CheerHistoryEntry] {
                let ids = list.compactMap(\.id)
                return Dictionary(list.compactMap { e in e.id.flatMap { id in ids.filter { $0 == id }.count == 1 ? (id, e) : nil } }, uniquingKeysWith: { a, _ in a })
            }
            let first = once(x), second = once(y)
            let changed = second.values.filter { e in e.id.flatMap { first[$0] }.map { $0 != e } ?? false }.sorted { ($0.id ?? "") < ($1.id ?? "") }
            guard let one = changed.first, let was = one.id.flatMap({ first[$0] }) else { return ExploreOutcome(c, .passed) }
            return ExploreOutcome(c, .finding, findings: [finding(c, .entryUnstable, subject: "entry \(one.id ?? "") of \(user)'s history",
                                                                  expected: "the same entry on both reads", actual: "\(EntryWords.of(was)), then \(EntryWords.of(one))"
                                                                      + (changed.count > 1 ? " (and \(changed.count - 1) more)" : ""), ids: [a.requestID, b.requestID])])
        case .charset, .sharedCache:
            var findings: [ShopFinding] = []
            let reads: [(OperationID, [(name: String, value: String)])] = [(.listAudioPacks, []), (.getBalance, [("user_id", user)]),
                                                                           (.getCheerHistory, [("user_id", user), ("page", "1"), ("per_page", "50")])]
            for (op, query) in reads where check == .charset || query.contains(where: { $0.name == "user_id" }) {
                let rule = ReadRule<ProbeAnswer>(expecting: { problem(check, $0) == nil }, twoAgree: { problem(check, $0) == problem(check, $1) })
                let taken = try await rule.reads { try await wire.send(op, query: query) }
                guard taken.met else {
                    findings.append(finding(c, .answersDisagree, subject: RequestKey.operationLine(op, query: query), expected: "two answers that agree",
                                            actual: taken.all.map { problem(check, $0) ?? "nothing wrong" }.joined(separator: ", then "), ids: taken.all.map(\.requestID)))
                    continue
                }
                guard let found = problem(check, taken.last) else { continue }
                findings.append(finding(c, check == .charset ? .charset : .sharedCacheable, subject: RequestKey.operationLine(op, query: query),
                                        expected: check == .charset ? "a body valid in the charset it claims (\(taken.last.charset ?? "utf-8, JSON's"))"
                                            : "an answer no shared cache may store (private or no-store, or no public, s-maxage or must-revalidate)",
                                        actual: found, ids: taken.all.map(\.requestID)))
            }
            return ExploreOutcome(c, findings.isEmpty ? .passed : .finding, findings: findings)
        case .serverClock:
            // The entries the campaign wrote, each dated within its write (the server's own Date headers around it,
            // with two seconds for their resolution); the watchdog holds every entry to the answer's own Date.
            let written = await last.written
            guard !written.isEmpty else { return ExploreOutcome(c, .notJudged, note: "not judged: the campaign wrote no entry to hold to the server's clock") }
            let query: [(name: String, value: String)] = [("user_id", user), ("page", "1"), ("per_page", "50")]
            func off(_ a: ProbeAnswer) -> [String] {
                guard a.isSuccess, let entries = try? CheerHistory.decode(a.body).entries else { return [] }
                return entries.compactMap { e in
                    guard let id = e.id, let window = written[id], entries.filter({ $0.id == id }).count == 1 else { return nil }
                    let from = window.lowerBound.addingTimeInterval(-2), to = window.upperBound.addingTimeInterval(2)
                    guard e.date < from || e.date > to else { return nil }
                    let by = e.date > to ? e.date.timeIntervalSince(window.upperBound) : e.date.timeIntervalSince(window.lowerBound)
                    return "entry \(id) dated \(ISO8601.format(e.date)), \(Int(abs(by).rounded())) s \(by > 0 ? "after" : "before") the server's Date around its write"
                }
            }
            let rule = ReadRule<ProbeAnswer>(expecting: { off($0).isEmpty }, twoAgree: { off($0) == off($1) })
            let taken = try await rule.reads { try await wire.send(.getCheerHistory, query: query) }
            guard taken.met else {
                return ExploreOutcome(c, .finding, findings: [finding(c, .answersDisagree, subject: "the history of \(user)", expected: "two answers that agree",
                                                                      actual: taken.all.map { off($0).first ?? "every entry on time" }.joined(separator: ", then "), ids: taken.all.map(\.requestID))])
            }
            let found = off(taken.last)
            guard let one = found.first else { return ExploreOutcome(c, .passed, note: "\(written.count) entries written") }
            return ExploreOutcome(c, .finding, findings: [finding(c, .dateOutsideClock, subject: "the history of \(user)", expected: "each entry the campaign wrote dated within its write",
                                                                  actual: one + (found.count > 1 ? " (and \(found.count - 1) more)" : ""), ids: taken.all.map(\.requestID))])
        }
    }

    /// What is wrong with an answer's framing for `check`, in words; nil when nothing is.
    func problem(_ check: ExploreIdentity, _ a: ProbeAnswer) -> String? {
        if check == .sharedCache { return a.isSuccess ? a.sharedCacheable : nil }
        let charset = a.charset ?? "utf-8"
        guard ["utf-8", "utf8"].contains(charset), let at = UTF8Scan.firstInvalid(a.body) else { return nil }
        return String(format: "byte %d of the body is 0x%02X, not UTF-8", at, a.body[at])
    }

}
