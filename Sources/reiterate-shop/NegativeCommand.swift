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
            For each case: the user's balance and newest history entry, the total of the pack the case's body
            names (none for a purchase) and a second user's balance are read before and after; a read that
            failed on either side is "not known", never a change. The pack's total and the second user's
            balance count only when they moved by the case's amount; any other move is "moved meanwhile".
            One line a case: `refused 400 (rq-…)`, `ACCEPTED: …` with what changed, `APPLIED, answered …`
            (a 5xx or no answer, and the user's balance or newest entry moved by the case's amount), or
            `not judged: …` when the answer says nothing about the write (401, 407, 408, 429, 5xx, no answer)
            or the case was skipped. An accepted or applied case, or a refused one with a side effect, is a
            finding, also a `warning:` line. The contract watchdog's
            findings on the answers are `warning:` lines too; they change no case's verdict.
            Exit status: 0 every case refused with nothing changed; 65 a finding; 69 no finding but a case not
            judged (not a pass: run it again), or the reads before failed; 78 read-only or a bad setting.
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
            for c in cases {
                if json {
                    Terminal.out(try Output.jsonLine(NegativeCase.Listed(c)))
                } else {
                    Terminal.out("\(c.name.padding(toLength: 24, withPad: " ", startingAt: 0)) \(c.what)  [\(c.source.text)]\n")
                }
            }
            // With --json, stdout holds the cases alone; the summary goes to stderr.
            let summary = "\(cases.count) cases, nothing sent: add --yes to send them to \(settings.environment.uppercased()) as \(settings.user) (second user \(second))\n"
            if json { Terminal.err(summary) } else { Terminal.out(summary) }
            return
        }
        var tally = NegativeRun.Tally()
        do {
            tally = try await connection.withClient(settings, logger: logger) { client in
                try await NegativeRun(client: client, user: settings.user, second: second, bundles: bundles, json: json).run(cases)
            }
        } catch let exit as ExitCode {
            throw exit
        } catch {
            throw fail(error, tokenVariable: settings.tokenEnv)
        }
        if tally.findings > 0 { throw ExitCode(ExitStatus.dataError.rawValue) }
        if tally.notJudged > 0 { throw ExitCode(ExitStatus.unavailable.rawValue) }
    }
}

/// One write the shop must refuse: its name, what it sends and why it must be refused.
struct NegativeCase: Sendable {
    enum Write: Sendable {
        case spend, purchase
    }

    /// The pack whose `cheer_total` the case's write could change: the one its body names.
    enum Pack: Sendable, Equatable {
        /// The body names no pack (a purchase, a spend without a product or with one that is not text).
        case none
        /// The pack of the live list the run spends on (`NegativeFacts.pack`).
        case tested
        /// A pack identifier the body names, not in the list.
        case named(String)
    }

    /// Where a case's rule comes from.
    enum Source: Sendable, Equatable {
        /// A request field's rule in the contract's schema: `field` nil is the body itself.
        case field(OperationID, field: String?, rule: FieldRule)
        /// The contract's words about an answer of the operation (a 402, a 409).
        case words(OperationID, String)
        /// The shop's own data: its packs, users, the environment's bundles.
        case shop(String)

        /// A request field's rule (what the contract's schema says of it).
        enum FieldRule: String, Sendable, Encodable {
            case type, required, minimum, format
        }

        /// `contract: spendCheer amount minimum 1`.
        var text: String {
            switch self {
            case let .field(operation, field, rule):
                let detail: String
                switch (operation, field, rule) {
                case (_, _, .required): detail = ""
                case (.spendCheer, "amount", .minimum): detail = " 1"
                case (_, "transaction_id", .format): detail = " uint64"
                case (_, nil, .type): detail = " object"
                case (_, "transaction_id", .type), (_, "amount", .type): detail = " integer"
                case (_, _, .type): detail = " string"
                default: detail = ""
                }
                return "contract: \(operation.rawValue) \(field ?? "body") \(rule.rawValue)\(detail)"
            case let .words(operation, words): return "contract: \(operation.rawValue) \(words)"
            case let .shop(rule): return "shop rule: \(rule)"
            }
        }
    }

    /// A case as `--json` lists it (nothing sent): its name, what it sends, and its rule's source.
    struct Listed: Encodable {
        var name: String
        var what: String
        var source: String
        var operation: String?
        var field: String?
        var rule: String?

        init(_ c: NegativeCase) {
            name = c.name
            what = c.what
            source = c.source.text
            switch c.source {
            case let .field(operation, field, rule): (self.operation, self.field, self.rule) = (operation.rawValue, field ?? "", rule.rawValue)
            case let .words(operation, _): self.operation = operation.rawValue
            case .shop: break
            }
        }
    }

    var name: String
    var what: String
    /// Where the rule comes from: the contract's field (type, required, minimum, format), its words, or a shop rule.
    var source: Source
    var write: Write
    /// Whether it sends for an unknown user (else the user tested).
    var unknownUser = false
    /// The pack whose total it could change (the only one compared before and after).
    var pack: Pack
    /// The body, from what the run knows (a pack, the balance, a bundle, a credited transaction id).
    var body: @Sendable (NegativeFacts) -> String

    /// The catalogue: the contract's request fields (spendCheer: amount integer, minimum 1, required;
    /// product string, required; comment string. purchaseCheer: identifier string, required; transaction_id integer,
    /// uint64, required) and the shop's rules (packs, bundles, users, balance, transactions).
    static func catalogue(bundles: [CheerBundle]) -> [NegativeCase] {
        let notABundle = ["com.reiterate.cheer.7", "com.reiterate.negative.7"].first { id in !bundles.contains { $0.identifier == id } } ?? "negative.7"
        let unknownPack = "com.reiterate.pack.negative-test-unknown"
        func spend(_ name: String, _ what: String, _ source: Source, unknownUser: Bool = false, pack: Pack = .tested,
                   _ body: @escaping @Sendable (NegativeFacts) -> String) -> NegativeCase {
            NegativeCase(name: name, what: what, source: source, write: .spend, unknownUser: unknownUser, pack: pack, body: body)
        }
        func buy(_ name: String, _ what: String, _ source: Source, unknownUser: Bool = false, _ body: @escaping @Sendable (NegativeFacts) -> String) -> NegativeCase {
            NegativeCase(name: name, what: what, source: source, write: .purchase, unknownUser: unknownUser, pack: .none, body: body)
        }
        return [
            spend("unknown-pack", "a spend of 1 on a product not in the pack list", .shop("packs"), pack: .named(unknownPack)) { _ in
                #"{"amount":1,"product":"\#(unknownPack)"}"# },
            spend("overspend", "a spend of the balance + 1", .words(.spendCheer, "402, balance too low")) {
                #"{"amount":\#($0.balance.plusSaturating(1)),"product":\#($0.pack)}"# },
            spend("amount-zero", "a spend of 0", .field(.spendCheer, field: "amount", rule: .minimum)) { #"{"amount":0,"product":\#($0.pack)}"# },
            spend("amount-negative", "a spend of −3", .field(.spendCheer, field: "amount", rule: .minimum)) { #"{"amount":-3,"product":\#($0.pack)}"# },
            spend("amount-fraction", "a spend of 1.5", .field(.spendCheer, field: "amount", rule: .type)) { #"{"amount":1.5,"product":\#($0.pack)}"# },
            spend("amount-as-text", "a spend with amount \"1\"", .field(.spendCheer, field: "amount", rule: .type)) { #"{"amount":"1","product":\#($0.pack)}"# },
            spend("amount-missing", "a spend without amount", .field(.spendCheer, field: "amount", rule: .required)) { #"{"product":\#($0.pack)}"# },
            spend("product-missing", "a spend without product", .field(.spendCheer, field: "product", rule: .required), pack: .none) { _ in #"{"amount":1}"# },
            spend("product-not-text", "a spend with product 42", .field(.spendCheer, field: "product", rule: .type), pack: .none) { _ in #"{"amount":1,"product":42}"# },
            spend("comment-not-text", "a spend with comment 42", .field(.spendCheer, field: "comment", rule: .type)) {
                #"{"amount":1,"product":\#($0.pack),"comment":42}"# },
            spend("body-not-object", "a spend whose body is an array", .field(.spendCheer, field: nil, rule: .type), pack: .none) { _ in "[]" },
            spend("unknown-user-spend", "a spend of 1 for a user the shop does not know", .shop("users"), unknownUser: true) {
                #"{"amount":1,"product":\#($0.pack)}"# },
            buy("not-a-bundle", "a purchase of \(notABundle)", .shop("bundles (the environment's list)")) {
                #"{"identifier":"\#(notABundle)","transaction_id":\#($0.freshTransaction)}"# },
            buy("transaction-replayed", "a purchase with a transaction id already credited", .words(.purchaseCheer, "409, credited once")) {
                #"{"identifier":\#($0.bundle),"transaction_id":\#($0.credited)}"# },
            buy("transaction-as-text", "the credited transaction id again, as a string", .field(.purchaseCheer, field: "transaction_id", rule: .type)) {
                #"{"identifier":\#($0.bundle),"transaction_id":"\#($0.credited)"}"# },
            buy("transaction-negative", "a purchase with transaction id −1", .field(.purchaseCheer, field: "transaction_id", rule: .format)) {
                #"{"identifier":\#($0.bundle),"transaction_id":-\#($0.freshTransaction % 1_000_000_000 + 1)}"# },
            buy("transaction-fraction", "a purchase with transaction id 1.5", .field(.purchaseCheer, field: "transaction_id", rule: .type)) {
                #"{"identifier":\#($0.bundle),"transaction_id":1.5}"# },
            buy("transaction-missing", "a purchase without transaction_id", .field(.purchaseCheer, field: "transaction_id", rule: .required)) { #"{"identifier":\#($0.bundle)}"# },
            buy("identifier-missing", "a purchase without identifier", .field(.purchaseCheer, field: "identifier", rule: .required)) {
                #"{"transaction_id":\#($0.freshTransaction)}"# },
            buy("identifier-not-text", "a purchase with identifier 42", .field(.purchaseCheer, field: "identifier", rule: .type)) {
                #"{"identifier":42,"transaction_id":\#($0.freshTransaction)}"# },
            buy("purchase-body-not-object", "a purchase whose body is an array", .field(.purchaseCheer, field: nil, rule: .type)) { _ in "[]" },
            buy("unknown-user-purchase", "a purchase for a user the shop does not know", .shop("users"), unknownUser: true) {
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

/// The reads that say whether anything changed. A nil is a read that failed: not known, never a change.
struct NegativeReads {
    struct History: Equatable {
        var total: Int
        /// `h-1 (5 on com.…)`, or nil when the history is empty.
        var newest: String?
        /// The newest entry's amount (nil: no entry, or unreadable).
        var newestAmount: Int?
    }

    var balance: Int?
    var history: History?
    /// Each pack's `cheer_total` by identifier (nil: that pack could not be read); nil: the list could not.
    var packs: [String: Int?]?
    var second: Int?
    var requestIDs: [String]

    /// What differs, in words (`balance 1,250 → 1,249`), what cannot be told because a read failed on
    /// either side, and what moved by another amount than the write's. Of the packs only `pack` is compared:
    /// the one the case's write names (another pack's total moves with anyone's cheer). That pack's total and
    /// the second user's balance move with other testers' activity too: a move of them is this write's only
    /// when it is the case's amount (`effect`); any other is `meanwhile`, never a change. The user's own
    /// balance and history are the user's alone: any move of them is a change.
    func changes(to after: NegativeReads, pack: String?, effect: NegativeEffect) -> (changed: [String], unknown: [String], meanwhile: [String]) {
        let g = Wording.grouped
        var changed: [String] = [], unknown: [String] = [], meanwhile: [String] = []
        func compareMove(_ what: String, _ a: Int?, _ b: Int?, expected: Set<Int>) {
            guard let a, let b else { return unknown.append(what) }
            guard a != b else { return }
            let words = "\(what) \(g(a)) → \(g(b))"
            if expected.contains(b.minusSaturating(a)) { changed.append(words) } else { meanwhile.append(words) }
        }
        func compare<T: Equatable>(_ what: String, _ a: T?, _ b: T?, _ words: (T, T) -> String) {
            guard let a, let b else { return unknown.append(what) }
            if a != b { changed.append(words(a, b)) }
        }
        compare("balance", balance, after.balance) { "balance \(g($0)) → \(g($1))" }
        compare("history", history, after.history) {
            "history total \(g($0.total)) → \(g($1.total)), newest \($0.newest ?? "none") → \($1.newest ?? "none")"
        }
        if let pack {
            if let was = packs, let now = after.packs {
                switch (was[pack], now[pack]) {
                case (nil, nil): break
                case (.some, nil): changed.append("\(pack) gone from the pack list")
                case let (nil, .some(total)): changed.append("\(pack) appeared in the pack list (cheer_total \(total.map(g) ?? "unreadable"))")
                case let (.some(a), .some(b)): compareMove("\(pack) cheer_total", a, b, expected: effect.packRises)
                }
            } else {
                unknown.append("\(pack) cheer_total")
            }
        }
        compareMove("second user's balance", second, after.second, expected: effect.balanceMoves)
        return (changed, unknown, meanwhile)
    }

    /// Whether the write was applied on the user tested: the balance moved by the case's amount, or a new
    /// newest entry of the case's amount (a spend's). Reads that failed tell nothing: false.
    func applied(to after: NegativeReads, effect: NegativeEffect) -> Bool {
        if let a = balance, let b = after.balance, a != b, effect.balanceMoves.contains(b.minusSaturating(a)) { return true }
        if let a = history, let b = after.history, a != b, let amount = b.newestAmount, b.newest != a.newest,
           effect.packRises.contains(amount), amount != 0 { return true }
        return false
    }
}

/// What a case's write would move if it were taken, read from the body it sends: a spend's amount (its
/// pack's total rises by it, a balance falls by it), a purchase's credit (a balance rises by it). A body
/// that does not say it plainly is read every way a lenient server could: 1.5 as 1 or 2, "1" as 1, an
/// amount missing as 1; a purchase's identifier not among the bundles by the number it ends in
/// (`….cheer.7`: 7), one missing or not text as any bundle's credit.
struct NegativeEffect: Sendable, Equatable {
    /// How a balance moves (a spend's −amount, a purchase's +credit); 0 is no move.
    var balanceMoves: Set<Int>
    /// How the pack's `cheer_total` rises (a spend's amount; none for a purchase).
    var packRises: Set<Int>

    init(body: String, write: NegativeCase.Write, bundles: [CheerBundle]) {
        let object = (try? JSONSerialization.jsonObject(with: Data(body.utf8), options: [.fragmentsAllowed])) as? [String: Any]
        switch write {
        case .spend:
            let amounts: Set<Int>
            switch object?["amount"] {
            case let n as NSNumber where n.doubleValue == n.doubleValue.rounded() && abs(n.doubleValue) < 1e15: amounts = [n.intValue]
            case let n as NSNumber where abs(n.doubleValue) < 1e15: amounts = [Int(n.doubleValue.rounded(.down)), Int(n.doubleValue.rounded(.up))]
            case let text as String: amounts = Int(text).map { [$0] } ?? [1]
            case nil: amounts = [1]
            default: amounts = []
            }
            packRises = amounts
            balanceMoves = Set(amounts.map { 0.minusSaturating($0) })
        case .purchase:
            packRises = []
            if let id = object?["identifier"] as? String {
                if let bundle = bundles.first(where: { $0.identifier == id }) {
                    balanceMoves = [bundle.cheer]
                } else {
                    balanceMoves = Set(id.split(separator: ".").last.flatMap { Int($0) }.map { [$0] } ?? bundles.map(\.cheer))
                }
            } else {
                balanceMoves = Set(bundles.map(\.cheer))
            }
        }
    }
}

/// What an answer says about a case's write.
enum NegativeAnswer: Equatable {
    /// A 2xx: the write was taken (what it answered).
    case accepted(String)
    /// A 4xx that judges the write: its status.
    case refused(Int)
    /// The answer says nothing about the write (why, in words): an auth or rate limit or timeout answer,
    /// a server failure, no answer.
    case notJudged(String)

    static func of(_ error: ShopAPIError) -> NegativeAnswer {
        let said = ErrorText.sentence(error)
        switch (error, error.status) {
        case (.signInExpired, _): return .notJudged("not signed in (401), \(said)")
        case (.undecodable, nil): return .accepted("HTTP 2xx whose body could not be read: \(said)")
        case (_, nil): return .notJudged("no answer, \(said)")
        case let (_, status?):
            switch status {
            case 200..<300: return .accepted(said)
            case 401, 407: return .notJudged("not signed in, \(said)")
            case 408: return .notJudged("the server gave up reading the request, \(said)")
            case 429: return .notJudged("rate-limited, \(said)")
            case 400..<500: return .refused(status)
            case 500..<600: return .notJudged("the server failed, \(said)")
            default: return .notJudged("neither taken nor refused, \(said)")
            }
        }
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
        /// `refused`, `accepted`, `applied` (a 5xx or no answer, and the write applied on the user) or
        /// `not-judged` (also a case skipped).
        var verdict: String
        var refused: Bool
        var status: Int?
        var requestID: String?
        var changed: [String]
        /// What moved by another amount than the write's (other testers' activity): not a change.
        var meanwhile: [String]
        /// What could not be compared (a read failed before or after).
        var unknown: [String]
        var finding: String?
        /// Why a case was not judged.
        var why: String?
    }

    /// Cases with a finding, and cases whose answer did not judge the write.
    struct Tally {
        var findings = 0
        var notJudged = 0
    }

    func run(_ cases: [NegativeCase]) async throws -> Tally {
        let first = try await read()
        guard let balance = first.balance else {
            throw CLIError(message: "the balance of \(user) could not be read: no case was sent", exitCode: .unavailable)
        }
        guard let pack = first.packs?.filter({ $0.value != nil }).keys.sorted().first else {
            throw CLIError(message: "the pack list could not be read: no case was sent", exitCode: .unavailable)
        }
        let bundle = bundles.first?.identifier ?? "com.reiterate.cheer.50"
        // The one write that is meant to be taken: a purchase whose transaction id the replay cases resend.
        var credited: UInt64 = 0
        var setupFailed: String?
        if cases.contains(where: { $0.name.hasPrefix("transaction-replayed") || $0.name == "transaction-as-text" }) {
            let id = UInt64.random(in: 1_000_000...UInt64(Int64.max))
            do {
                _ = try await client.send(PurchaseCheer(identifier: bundle, transactionID: id, user: user))
                credited = id
                Terminal.err("note: setup: bought \(bundle) with transaction \(id) (the replay cases resend it)\n")
            } catch let error as ShopAPIError {
                setupFailed = ErrorText.line(error)
                Terminal.err("warning: setup: the purchase the replay cases resend was not taken: \(ErrorText.line(error)); they are skipped (not judged)\n")
            }
        }
        let facts = NegativeFacts(pack: Self.quoted(pack), balance: balance, bundle: Self.quoted(bundle), credited: credited)
        var tally = Tally()
        for c in cases {
            if credited == 0, c.name == "transaction-replayed" || c.name == "transaction-as-text" {
                // Not sent: not a pass. Counted as not judged.
                let why = "skipped, the setup purchase it resends was not taken" + (setupFailed.map { " (\(Sanitizer.line($0)))" } ?? "")
                tally.notJudged += 1
                if json {
                    Terminal.out(try Output.jsonLine(Line(name: c.name, verdict: "not-judged", refused: false, status: nil, requestID: nil, changed: [],
                                                          meanwhile: [], unknown: [], finding: nil, why: why)))
                } else {
                    Terminal.out("\(c.name.padding(toLength: 24, withPad: " ", startingAt: 0)) not judged: \(Sanitizer.line(why))\n")
                }
                continue
            }
            let before = try await read()
            let target = c.unknownUser ? "qa-negative-nobody-\(UInt32.random(in: 0...UInt32.max))" : user
            let body = c.body(NegativeFacts(pack: facts.pack, balance: before.balance ?? balance, bundle: facts.bundle, credited: credited))
            var status: Int?
            var requestID: String?
            let answer: NegativeAnswer
            do {
                let sent: (response: CheerBalance, requestID: String?)
                switch c.write {
                case .spend: sent = try await client.sendAnswered(RawJSONWrite<SpendCheer>(json: body, user: target))
                case .purchase: sent = try await client.sendAnswered(RawJSONWrite<PurchaseCheer>(json: body, user: target))
                }
                status = 200
                requestID = sent.requestID
                answer = .accepted("HTTP 2xx, balance \(Wording.grouped(sent.response.balance))")
            } catch let error as ShopAPIError {
                status = error.status
                requestID = error.requestID
                answer = NegativeAnswer.of(error)
            }
            let after = try await read()
            let packID: String? = switch c.pack {
            case .none: nil
            case .tested: pack
            case let .named(id): id
            }
            let effect = NegativeEffect(body: body, write: c.write, bundles: bundles)
            let (changed, unknown, meanwhile) = before.changes(to: after, pack: packID, effect: effect)
            let reads = "reads before \(before.requestIDs.joined(separator: ", ")); after \(after.requestIDs.joined(separator: ", "))"
            let id = requestID.map { " (\(Sanitizer.line($0)))" } ?? ""
            let notKnown = (meanwhile.isEmpty ? "" : "; moved meanwhile (not this write's amount): \(meanwhile.joined(separator: "; "))")
                + (unknown.isEmpty ? "" : "; not known (a read failed): \(unknown.joined(separator: ", "))")
            var line: String
            var finding: String?
            var why: String?
            var applied = false
            switch answer {
            case let .refused(code) where changed.isEmpty:
                line = "refused \(code)\(id)\(notKnown)"
            case let .refused(code):
                line = "refused \(code)\(id), but it changed: \(changed.joined(separator: "; "))\(notKnown) — \(reads)"
                finding = "refused, with a side effect: \(changed.joined(separator: "; "))"
            case let .accepted(said):
                line = "ACCEPTED\(id): \(said); \(changed.isEmpty ? "nothing changed" : changed.joined(separator: "; "))\(notKnown) — \(reads)"
                finding = "accepted (\(said))" + (changed.isEmpty ? "" : ": \(changed.joined(separator: "; "))")
            case let .notJudged(reason) where before.applied(to: after, effect: effect):
                // A 5xx or no answer, and the user's balance or newest entry moved by the case's amount: the
                // server applied a write it must refuse, and answered an error.
                applied = true
                line = "APPLIED, answered \(reason)\(id): \(changed.joined(separator: "; "))\(notKnown) — \(reads)"
                finding = "applied, answered \(reason): \(changed.joined(separator: "; "))"
            case let .notJudged(reason):
                // Neither a pass nor a finding: the server did not decide on the write.
                why = reason
                line = "not judged: \(reason)\(id)"
                if !changed.isEmpty { line += "; meanwhile it changed: \(changed.joined(separator: "; ")) — \(reads)" }
                line += notKnown
                tally.notJudged += 1
            }
            if let finding {
                tally.findings += 1
                Terminal.err("warning: negative \(c.name): \(Sanitizer.line(c.what)) must be refused (\(c.source.text)); \(Sanitizer.line(finding))\(id)\n")
            }
            if json {
                let verdict = switch answer {
                case .refused: "refused"
                case .accepted: "accepted"
                case .notJudged: applied ? "applied" : "not-judged"
                }
                let refused = if case .refused = answer { true } else { false }
                Terminal.out(try Output.jsonLine(Line(name: c.name, verdict: verdict, refused: refused, status: status, requestID: requestID, changed: changed,
                                                      meanwhile: meanwhile, unknown: unknown, finding: finding, why: why)))  // one line, newline included
            } else {
                Terminal.out("\(c.name.padding(toLength: 24, withPad: " ", startingAt: 0)) \(Sanitizer.line(line))\n")
            }
        }
        // The contract watchdog's findings on the run's own answers (an error body that is not the Error
        // schema …), grouped, as `spend` and `buy` report theirs: warning lines that change no verdict.
        _ = reportFindings(await client.exchanges.all())
        if !json {
            var summary = "\(tally.findings) finding\(tally.findings == 1 ? "" : "s")"
            if tally.notJudged > 0 { summary += ", \(tally.notJudged) not judged" }
            Terminal.out(summary + "\n")
        }
        return tally
    }

    /// The reads before and after a case; a read that fails is nil (not known).
    func read() async throws -> NegativeReads {
        var ids: [String] = []
        func note(_ id: String?) { if let id { ids.append(id) } }
        var reads = NegativeReads(balance: nil, history: nil, packs: nil, second: nil, requestIDs: [])
        if let b = try? await client.sendAnswered(Balance(user: user)) { reads.balance = b.response.balance; note(b.requestID) }
        if let h = try? await client.sendAnswered(CheerHistory(user: user, page: 1, perPage: 1)) {
            var newest: String?
            var newestAmount: Int?
            switch h.response.items.first {
            case let .entry(e)?: newest = "\(e.id ?? "no id") (\(Wording.grouped(e.amount)) on \(e.product))"; newestAmount = e.amount
            case let .unreadable(u)?: newest = "\(u.id ?? "no id") (unreadable)"
            case nil: newest = nil
            }
            reads.history = NegativeReads.History(total: h.response.totalCount, newest: newest, newestAmount: newestAmount)
            note(h.requestID)
        }
        if let p = try? await client.sendAnswered(AudioPacks()) {
            var totals: [String: Int?] = [:]
            for pack in p.response.packs where totals[pack.identifier] == nil { totals[pack.identifier] = .some(pack.cheerTotal) }
            for entry in p.response.unreadable { if let id = entry.id, totals[id] == nil { totals[id] = .some(nil) } }
            reads.packs = totals
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
