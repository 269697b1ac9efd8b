import ArgumentParser
import Foundation
import JSONTokens
import ShopAPI
import ShopSettings
import ShopViewModels
import TerminalText

/// `reiterate-shop negative [--env NAME] [--user ID] [--json] [--yes] [--only CASES]`: writes the shop
/// must refuse, each checked for a 4xx refusal and for nothing changed (docs/checks.md, Negative tests).
struct NegativeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "negative",
        abstract: "Send writes the shop must refuse; check each is refused (4xx) and changed nothing.",
        discussion: """
            Without --yes it lists the cases and sends nothing; always refused in a read-only environment.
            For each case: the user's balance and newest history entry, the pack totals and a second user's
            balance are read before and after. One line a case: `refused 400 (rq-…)`, or `ACCEPTED: …` with
            what changed. An accepted case, or one with a side effect, is a finding, also a `warning:` line.
            Exit status: 0 no finding; 65 a finding; 78 read-only or a bad setting; 69 the reads failed.
            """
    )

    @Flag(help: "Send them (without this flag the cases are listed and nothing is sent).") var yes = false
    @Flag(help: "One JSON object a case.") var json = false
    @Option(help: ArgumentHelp("Only these cases (comma-separated names, as listed).", valueName: "cases")) var only: String?
    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        let (settings, logger) = try connection.settingsAndLogger()
        guard !settings.readOnly else {
            throw fail(CLIError(message: "\(settings.environment.uppercased()) is read-only: negative tests are refused", exitCode: .config))
        }
        let bundles = zip(settings.bundleIdentifiers, settings.bundles).map { CheerBundle(identifier: $0, cheer: $1) }
        var cases = NegativeCase.catalogue(bundles: bundles)
        if let only {
            let wanted = Set(only.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            let unknown = wanted.subtracting(cases.map(\.name))
            guard unknown.isEmpty else {
                throw fail(CLIError(message: "no case named \(unknown.sorted().joined(separator: ", ")); cases: \(cases.map(\.name).joined(separator: ", "))",
                                    exitCode: .usage))
            }
            cases = cases.filter { wanted.contains($0.name) }
        }
        let second = settings.users.first { $0 != settings.user } ?? (settings.user == "qa-whale" ? "qa-alice" : "qa-whale")
        guard yes else {
            for c in cases { Terminal.out("\(c.name.padding(toLength: 24, withPad: " ", startingAt: 0)) \(c.what)  [\(c.source)]\n") }
            Terminal.out("\(cases.count) cases, nothing sent: add --yes to send them to \(settings.environment.uppercased()) as \(settings.user) (second user \(second))\n")
            return
        }
        var findings = 0
        do {
            findings = try await connection.withClient(settings, logger: logger) { client in
                try await NegativeRun(client: client, user: settings.user, second: second, bundles: bundles, json: json).run(cases)
            }
        } catch let exit as ExitCode {
            throw exit
        } catch {
            throw fail(error, tokenVariable: settings.tokenEnv)
        }
        if findings > 0 { throw ExitCode(ExitStatus.dataError.rawValue) }
    }
}

/// One write the shop must refuse: its name, what it sends and why it must be refused.
struct NegativeCase: Sendable {
    enum Write: Sendable {
        case spend, purchase
    }

    var name: String
    var what: String
    /// Where the rule comes from: the contract's field (type, required, minimum, format) or a shop rule.
    var source: String
    var write: Write
    /// Whether it sends for an unknown user (else the user tested).
    var unknownUser = false
    /// The body, from what the run knows (a pack, the balance, a bundle, a credited transaction id).
    var body: @Sendable (NegativeFacts) -> String

    /// The catalogue: the contract's request fields (spendCheer: amount integer, minimum 1, required;
    /// product string, required. purchaseCheer: identifier string, required; transaction_id integer,
    /// uint64, required) and the shop's rules (packs, bundles, users, balance, transactions).
    static func catalogue(bundles: [CheerBundle]) -> [NegativeCase] {
        let notABundle = ["com.reiterate.cheer.7", "com.reiterate.negative.7"].first { id in !bundles.contains { $0.identifier == id } } ?? "negative.7"
        func spend(_ name: String, _ what: String, _ source: String, unknownUser: Bool = false, _ body: @escaping @Sendable (NegativeFacts) -> String) -> NegativeCase {
            NegativeCase(name: name, what: what, source: source, write: .spend, unknownUser: unknownUser, body: body)
        }
        func buy(_ name: String, _ what: String, _ source: String, unknownUser: Bool = false, _ body: @escaping @Sendable (NegativeFacts) -> String) -> NegativeCase {
            NegativeCase(name: name, what: what, source: source, write: .purchase, unknownUser: unknownUser, body: body)
        }
        return [
            spend("unknown-pack", "a spend of 1 on a product not in the pack list", "shop rule: packs") { _ in
                #"{"amount":1,"product":"com.reiterate.pack.negative-test-unknown"}"# },
            spend("overspend", "a spend of the balance + 1", "contract: spendCheer 402, balance too low") {
                #"{"amount":\#($0.balance + 1),"product":\#($0.pack)}"# },
            spend("amount-zero", "a spend of 0", "contract: spendCheer amount minimum 1") { #"{"amount":0,"product":\#($0.pack)}"# },
            spend("amount-negative", "a spend of −3", "contract: spendCheer amount minimum 1") { #"{"amount":-3,"product":\#($0.pack)}"# },
            spend("amount-fraction", "a spend of 1.5", "contract: spendCheer amount type integer") { #"{"amount":1.5,"product":\#($0.pack)}"# },
            spend("amount-as-text", "a spend with amount \"1\"", "contract: spendCheer amount type integer") { #"{"amount":"1","product":\#($0.pack)}"# },
            spend("amount-missing", "a spend without amount", "contract: spendCheer amount required") { #"{"product":\#($0.pack)}"# },
            spend("product-missing", "a spend without product", "contract: spendCheer product required") { _ in #"{"amount":1}"# },
            spend("product-not-text", "a spend with product 42", "contract: spendCheer product type string") { _ in #"{"amount":1,"product":42}"# },
            spend("body-not-object", "a spend whose body is an array", "contract: spendCheer body type object") { _ in "[]" },
            spend("unknown-user-spend", "a spend of 1 for a user the shop does not know", "shop rule: users", unknownUser: true) {
                #"{"amount":1,"product":\#($0.pack)}"# },
            buy("not-a-bundle", "a purchase of \(notABundle)", "shop rule: bundles (the environment's list)") {
                #"{"identifier":"\#(notABundle)","transaction_id":\#($0.freshTransaction)}"# },
            buy("transaction-replayed", "a purchase with a transaction id already credited", "contract: purchaseCheer 409, credited once") {
                #"{"identifier":\#($0.bundle),"transaction_id":\#($0.credited)}"# },
            buy("transaction-as-text", "the credited transaction id again, as a string", "contract: transaction_id type integer; credited once") {
                #"{"identifier":\#($0.bundle),"transaction_id":"\#($0.credited)"}"# },
            buy("transaction-negative", "a purchase with transaction id −1", "contract: transaction_id format uint64") {
                #"{"identifier":\#($0.bundle),"transaction_id":-\#($0.freshTransaction % 1_000_000_000 + 1)}"# },
            buy("transaction-fraction", "a purchase with transaction id 1.5", "contract: transaction_id type integer") {
                #"{"identifier":\#($0.bundle),"transaction_id":1.5}"# },
            buy("transaction-missing", "a purchase without transaction_id", "contract: purchaseCheer transaction_id required") { #"{"identifier":\#($0.bundle)}"# },
            buy("identifier-missing", "a purchase without identifier", "contract: purchaseCheer identifier required") {
                #"{"transaction_id":\#($0.freshTransaction)}"# },
            buy("unknown-user-purchase", "a purchase for a user the shop does not know", "shop rule: users", unknownUser: true) {
                #"{"identifier":\#($0.bundle),"transaction_id":\#($0.freshTransaction)}"# },
        ]
    }
}

/// What the cases' bodies are made from, read before they are sent.
struct NegativeFacts: Sendable {
    /// A pack in the live list, as a JSON string.
    var pack: String
    var balance: Int
    /// A bundle of the environment, as a JSON string.
    var bundle: String
    /// A transaction id credited by the run's one setup purchase (0 when it was not).
    var credited: UInt64
    /// A transaction id never sent before (random).
    var freshTransaction: UInt64 { UInt64.random(in: 1_000_000...UInt64(Int64.max)) }
}

/// The reads that say whether anything changed.
struct NegativeReads: Equatable {
    var balance: Int?
    var newest: String?
    var historyTotal: Int?
    var packs: [String: Int]
    var second: Int?
    var requestIDs: [String]

    static func == (a: NegativeReads, b: NegativeReads) -> Bool {
        a.balance == b.balance && a.newest == b.newest && a.historyTotal == b.historyTotal && a.packs == b.packs && a.second == b.second
    }

    /// What differs, in words: `balance 1,250 → 1,249; second user's balance …`.
    func changes(to after: NegativeReads) -> [String] {
        let g = Wording.grouped
        func num(_ v: Int?) -> String { v.map(g) ?? "unread" }
        var out: [String] = []
        if balance != after.balance { out.append("balance \(num(balance)) → \(num(after.balance))") }
        if newest != after.newest || historyTotal != after.historyTotal {
            out.append("history total \(num(historyTotal)) → \(num(after.historyTotal)), newest \(newest ?? "none") → \(after.newest ?? "none")")
        }
        for (id, total) in after.packs.sorted(by: { $0.key < $1.key }) where packs[id] != total {
            out.append("\(id) cheer_total \(num(packs[id])) → \(g(total))")
        }
        for id in packs.keys.sorted() where after.packs[id] == nil { out.append("\(id) gone from the pack list") }
        if second != after.second { out.append("second user's balance \(num(second)) → \(num(after.second))") }
        return out
    }
}

/// One run of the catalogue against a client.
struct NegativeRun {
    let client: ShopClient
    let user: String
    let second: String
    let bundles: [CheerBundle]
    let json: Bool

    struct Line: Encodable {
        var name: String
        var refused: Bool
        var status: Int?
        var requestID: String?
        var changed: [String]
        var finding: String?
    }

    func run(_ cases: [NegativeCase]) async throws -> Int {
        let first = try await read()
        guard let balance = first.balance else {
            throw CLIError(message: "the balance of \(user) could not be read: no case was sent", exitCode: .unavailable)
        }
        guard let pack = first.packs.keys.sorted().first else {
            throw CLIError(message: "the pack list could not be read: no case was sent", exitCode: .unavailable)
        }
        let bundle = bundles.first?.identifier ?? "com.reiterate.cheer.50"
        // The one write that is meant to be taken: a purchase whose transaction id the replay cases resend.
        var credited: UInt64 = 0
        if cases.contains(where: { $0.name.hasPrefix("transaction-replayed") || $0.name == "transaction-as-text" }) {
            let id = UInt64.random(in: 1_000_000...UInt64(Int64.max))
            do {
                _ = try await client.send(PurchaseCheer(identifier: bundle, transactionID: id, user: user))
                credited = id
                Terminal.err("note: setup: bought \(bundle) with transaction \(id) (the replay cases resend it)\n")
            } catch let error as ShopAPIError {
                Terminal.err("warning: setup: the purchase the replay cases resend was not taken: \(ErrorText.line(error)); they are skipped\n")
            }
        }
        let facts = NegativeFacts(pack: Self.quoted(pack), balance: balance, bundle: Self.quoted(bundle), credited: credited)
        var findings = 0
        for c in cases {
            if credited == 0, c.name == "transaction-replayed" || c.name == "transaction-as-text" { continue }
            let before = try await read()
            let target = c.unknownUser ? "qa-negative-nobody-\(UInt32.random(in: 0...UInt32.max))" : user
            let body = c.body(NegativeFacts(pack: facts.pack, balance: before.balance ?? balance, bundle: facts.bundle, credited: credited))
            var status: Int?
            var requestID: String?
            var refused = false
            var answer = ""
            do {
                let sent: (response: CheerBalance, requestID: String?)
                switch c.write {
                case .spend: sent = try await client.sendAnswered(RawJSONWrite<SpendCheer>(json: body, user: target))
                case .purchase: sent = try await client.sendAnswered(RawJSONWrite<PurchaseCheer>(json: body, user: target))
                }
                status = 200
                requestID = sent.requestID
                answer = "HTTP 2xx, balance \(Wording.grouped(sent.response.balance))"
            } catch let error as ShopAPIError {
                status = error.status
                requestID = error.requestID
                refused = (400..<500).contains(error.status ?? 0)
                answer = ErrorText.line(error)
            }
            let after = try await read()
            let changed = before.changes(to: after)
            let reads = "reads before \(before.requestIDs.joined(separator: ", ")); after \(after.requestIDs.joined(separator: ", "))"
            let id = requestID.map { " (\(Sanitizer.line($0)))" } ?? ""
            var line: String
            var finding: String?
            if refused && changed.isEmpty {
                line = "refused \(status ?? 0)\(id)"
            } else if refused {
                line = "refused \(status ?? 0)\(id), but it changed: \(changed.joined(separator: "; ")) — \(reads)"
                finding = "refused, with a side effect: \(changed.joined(separator: "; "))"
            } else if status == 200 {
                line = "ACCEPTED\(id): \(answer); \(changed.isEmpty ? "nothing changed" : changed.joined(separator: "; ")) — \(reads)"
                finding = "accepted (\(answer))" + (changed.isEmpty ? "" : ": \(changed.joined(separator: "; "))")
            } else {
                line = "NOT REFUSED: \(answer)\(changed.isEmpty ? "" : "; \(changed.joined(separator: "; "))") — \(reads)"
                finding = "no 4xx refusal: \(answer)"
            }
            if let finding {
                findings += 1
                Terminal.err("warning: negative \(c.name): \(Sanitizer.line(c.what)) must be refused (\(c.source)); \(Sanitizer.line(finding))\(id)\n")
            }
            if json {
                Terminal.out(try Output.jsonLine(Line(name: c.name, refused: refused, status: status, requestID: requestID, changed: changed, finding: finding)))  // one line, newline included
            } else {
                Terminal.out("\(c.name.padding(toLength: 24, withPad: " ", startingAt: 0)) \(Sanitizer.line(line))\n")
            }
        }
        if !json { Terminal.out("\(findings) finding\(findings == 1 ? "" : "s")\n") }
        return findings
    }

    /// The reads before and after a case (a read that fails counts as unread: `unread` on both sides is
    /// no change).
    func read() async throws -> NegativeReads {
        var ids: [String] = []
        func note(_ id: String?) { if let id { ids.append(id) } }
        var reads = NegativeReads(balance: nil, newest: nil, historyTotal: nil, packs: [:], second: nil, requestIDs: [])
        if let b = try? await client.sendAnswered(Balance(user: user)) { reads.balance = b.response.balance; note(b.requestID) }
        if let h = try? await client.sendAnswered(CheerHistory(user: user, page: 1, perPage: 1)) {
            reads.historyTotal = h.response.totalCount
            if case let .entry(e)? = h.response.items.first { reads.newest = "\(e.id ?? "no id") (\(Wording.grouped(e.amount)) on \(e.product))" }
            note(h.requestID)
        }
        if let p = try? await client.sendAnswered(AudioPacks()) {
            reads.packs = Dictionary(p.response.packs.map { ($0.identifier, $0.cheerTotal ?? 0) }, uniquingKeysWith: { a, _ in a })
            note(p.requestID)
        }
        if let s = try? await client.sendAnswered(Balance(user: second)) { reads.second = s.response.balance; note(s.requestID) }
        reads.requestIDs = ids.map(Sanitizer.line)
        return reads
    }

    /// A JSON string literal.
    static func quoted(_ text: String) -> String {
        var w = JSONWriter()
        w.string(text)
        return w.text
    }
}
