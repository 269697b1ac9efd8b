import Foundation
import HTTPTypes
import JSONTokens
import ShopAPI
import Testing
@testable import ShopViewModels

let rainPack = "com.reiterate.pack.rain"

/// An app spend seen through the proxy (request id `rq-a<id>`), answered `status` with `balance`.
func appSpend(_ id: Int, _ amount: Int, on product: String = rainPack, comment: String? = nil, user: String? = "qa-alice",
              sent: Date, answered: Date? = nil, status: Int? = 200, balance: Int? = nil, fault: FaultNote? = nil) -> AppWrite {
    AppWrite(id: id, kind: .spend(product: product, amount: amount, comment: comment), user: user, sentAt: sent,
             answeredAt: answered ?? sent.addingTimeInterval(0.2), status: status, balance: balance, requestID: "rq-a\(id)", fault: fault)
}

/// An app purchase of the stand-in's bundle of `bundle` cheer (request id `rq-a<id>`).
func appPurchase(_ id: Int, bundle: Int, transaction: TransactionID, user: String? = "qa-alice", sent: Date, answered: Date? = nil,
                 status: Int? = 200, balance: Int? = nil, fault: FaultNote? = nil) -> AppWrite {
    AppWrite(id: id, kind: .purchase(identifier: "com.reiterate.cheer.\(bundle)", transactionID: transaction), user: user, sentAt: sent,
             answeredAt: answered ?? sent.addingTimeInterval(0.2), status: status, balance: balance, requestID: "rq-a\(id)", fault: fault)
}

/// The reconciliation when the app's proxy runs: each change names the writes that explain it, and
/// the verdicts only that pairing gives. Pure: `Reconciler.compare` with the app's writes of the span.
@Suite struct PairingTests {
    typealias R = ReconcileTests
    static let t1 = R.t1
    static let before = R.read(1_250, R.older, total: 100, ids: ("rq-b1", "rq-h1"))
    static let ids = ["rq-b1", "rq-h1", "rq-b2", "rq-h2"]

    static func after(_ balance: Int, _ new: [CheerHistoryEntry] = []) -> Observation {
        R.read(balance, new + R.older, total: 100 + new.count, at: t1, ids: ("rq-b2", "rq-h2"))
    }

    static func compare(_ after: Observation, app: [AppWrite]?, own: [ShopWrite] = []) -> [WatchEvent] {
        Reconciler.compare(before, after, bundles: R.bundles, own: own, names: R.names, app: app, catalog: CheerBundle.standIn)
    }

    static func finding(_ events: [WatchEvent], _ check: WatchCheck) -> WatchEvent? {
        events.first { if case let .finding(c, _, _) = $0.change { return c == check } else { return false } }
    }

    static func texts(_ events: [WatchEvent]) -> [String] { events.map { $0.text(names: R.names) } }

    @Test func anAppSpendExplainsItsEntryAndDebit() {
        let spend = appSpend(1, 7, comment: "great pack", sent: t0, balance: 1_243)
        let events = Self.compare(Self.after(1_243, [R.e("n1", 7, comment: "great pack", at: Self.t1)]), app: [spend])
        #expect(Self.texts(events) == ["balance 1,250 → 1,243 (−7) (app, rq-a1)", "new entry: 7 cheer on Rain on a Tin Roof “great pack” (app, rq-a1)"])
        #expect(events.allSatisfy { $0.causes == [.app(requestID: "rq-a1")] && $0.outcome == .reconciled && $0.requestIDs == Self.ids })
        // Without the proxy the same change names no cause.
        #expect(Self.texts(Self.compare(Self.after(1_243, [R.e("n1", 7, comment: "great pack", at: Self.t1)]), app: nil))
            == ["balance 1,250 → 1,243 (−7)", "new entry: 7 cheer on Rain on a Tin Roof “great pack”"])
    }

    @Test func anAppPurchaseExplainsItsCredit() {
        let buy = appPurchase(2, bundle: 200, transaction: 42, sent: t0, balance: 1_450)
        let events = Self.compare(Self.after(1_450), app: [buy])
        #expect(Self.texts(events) == ["balance 1,250 → 1,450 (+200) (app, rq-a2)"])
        #expect(events.map(\.outcome) == [.reconciled] && events.first?.causes == [.app(requestID: "rq-a2")])
    }

    @Test func aChangeNoWriteExplainsIsMadeElsewhere() {
        let phone = Self.compare(Self.after(1_243, [R.e("n1", 7, at: Self.t1)]), app: [])
        #expect(Self.texts(phone) == ["balance 1,250 → 1,243 (−7) (made elsewhere)", "new entry: 7 cheer on Rain on a Tin Roof (made elsewhere)"])
        #expect(R.findings(phone).isEmpty && phone.allSatisfy { $0.causes == [.elsewhere] })
        let bought = Self.compare(Self.after(1_450), app: [])
        #expect(Self.texts(bought) == ["balance 1,250 → 1,450 (+200) (made elsewhere)", "a purchase of 200 cheer (bundle 200) (made elsewhere)"])
        // The app's spend and one from elsewhere in the same span: each entry its own cause; the balance both.
        let spend = appSpend(1, 7, sent: t0, balance: 1_243)
        let mixed = Self.compare(Self.after(1_238, [R.e("n2", 5, at: Self.t1), R.e("n1", 7, at: Self.t1)]), app: [spend])
        #expect(Self.texts(mixed) == ["balance 1,250 → 1,238 (−12) (app, rq-a1; made elsewhere)",
                                      "new entry: 7 cheer on Rain on a Tin Roof (app, rq-a1)", "new entry: 5 cheer on Rain on a Tin Roof (made elsewhere)"])
        #expect(R.findings(mixed).isEmpty)
        // A write the proxy answered in the server's stead never reached it: it explains nothing.
        let refused = appSpend(3, 7, sent: t0, status: 503, fault: .status)
        #expect(Self.compare(Self.after(1_243, [R.e("n1", 7, at: Self.t1)]), app: [refused]).allSatisfy { $0.causes == [.elsewhere] })
    }

    @Test func aWriteOfThisToolSaysThisTool() {
        let events = Self.compare(Self.after(1_243, [R.e("n1", 7, comment: "mine", at: Self.t1)]), app: [],
                                  own: [.spend(product: rainPack, amount: 7, comment: "mine")])
        #expect(Self.texts(events) == ["balance 1,250 → 1,243 (−7) (this tool)", "new entry: 7 cheer on Rain on a Tin Roof “mine” (this tool)"])
        #expect(events.allSatisfy { $0.outcome == .own && $0.causes == [.tool] })
        #expect(Self.compare(Self.after(1_450), app: [], own: [.purchase(identifier: "com.reiterate.cheer.200", transactionID: 7)]).map(\.causes) == [[.tool]])
    }

    /// One app request, two entries: the server recorded it twice. The debit that follows (one, for
    /// two entries) says it may follow from that; no "possible double submission" note (the app sent once).
    @Test func oneAppSpendTwoEntriesIsTheServers() {
        let spend = appSpend(1, 7, comment: "x", sent: t0, balance: 1_243)
        let twins = [R.e("n2", 7, comment: "x", at: Self.t1), R.e("n1", 7, comment: "x", at: Self.t1.addingTimeInterval(-1))]
        let events = Self.compare(Self.after(1_243, twins), app: [spend])
        #expect(R.findings(events) == [.entryTwice, .debitMismatch])
        let twice = Self.finding(events, .entryTwice)
        #expect(twice?.text(names: R.names) == "[entry-twice] expected one entry for the app's one request (rq-a1), got two entries of 7 cheer on Rain on a Tin Roof “x”")
        #expect(twice?.requestIDs == ["rq-a1"] + Self.ids)
        #expect(Self.finding(events, .debitMismatch)?.causedBy == .finding(.entryTwice))
        #expect(!events.contains { $0.text().contains("possible double submission") })
        #expect(events.filter { if case .entry = $0.change { return true } else { return false } }.allSatisfy { $0.causes == [.app(requestID: "rq-a1")] })
        // Debited twice too: the entries add up with the balance; still one request, two entries.
        #expect(R.findings(Self.compare(Self.after(1_236, twins), app: [spend])) == [.entryTwice])
        // Two requests, two entries: nothing to say here (a double submission is judged as the writes finish).
        let again = appSpend(2, 7, comment: "x", sent: t0.addingTimeInterval(3), balance: 1_236)
        let two = Self.compare(Self.after(1_236, twins), app: [spend, again])
        #expect(R.findings(two).isEmpty && !two.contains { $0.text().contains("possible double submission") })
        // Entries of no app request alike within seconds keep the note.
        #expect(Self.compare(Self.after(1_236, twins), app: []).contains { $0.text().hasPrefix("possible double submission") })
    }

    @Test func aPurchaseCreditedOtherThanItsBundleIsTheServers() {
        let buy = appPurchase(2, bundle: 200, transaction: 42, sent: t0, balance: 1_450)
        let events = Self.compare(Self.after(1_650), app: [buy])
        #expect(R.findings(events) == [.creditMismatch])
        let finding = Self.finding(events, .creditMismatch)
        #expect(finding?.text() == "[credit-mismatch] expected +200 for the app's purchase of com.reiterate.cheer.200 (rq-a2), got +400 credited")
        #expect(finding?.requestIDs == ["rq-a2"] + Self.ids)
        #expect(events.first?.outcome == .flagged && events.first?.causes == [.app(requestID: "rq-a2")])
        #expect(!events.contains { $0.text().hasPrefix("a purchase of") })
    }

    @Test func aPurchaseAnswered200AndNotCreditedIsTheServers() {
        let buy = appPurchase(2, bundle: 200, transaction: 42, sent: t0, balance: 1_450)
        let events = Self.compare(Self.after(1_250), app: [buy])
        #expect(R.findings(events) == [.notCredited])
        #expect(Self.texts(events) == ["[not-credited] expected +200 for the app's purchase of com.reiterate.cheer.200 (rq-a2), answered 200, got no credit (1,250 → 1,250)"])
        #expect(events.first?.requestIDs == ["rq-a2"] + Self.ids)
        // Answered 409 (a replay refused): owed nothing, nothing to say.
        #expect(Self.compare(Self.after(1_250), app: [appPurchase(3, bundle: 200, transaction: 42, sent: t0, status: 409)]).isEmpty)
        // A bundle of unknown size, or no answer: the credit is not judged (nothing invented); an answer
        // of a balance is still held to the read.
        let unknown = AppWrite(id: 4, kind: .purchase(identifier: "com.other.gems", transactionID: 9), user: "qa-alice", sentAt: t0,
                               answeredAt: t0, status: 200, balance: 1_450, requestID: "rq-a4")
        #expect(R.findings(Self.compare(Self.after(1_450), app: [unknown])).isEmpty)
        #expect(R.findings(Self.compare(Self.after(1_250), app: [unknown])) == [.answerContradicted])
        for read in [1_250, 1_450] {
            #expect(R.findings(Self.compare(Self.after(read), app: [appPurchase(5, bundle: 200, transaction: 43, sent: t0, status: nil)])).isEmpty)
        }
    }

    @Test func anAnswerTheNextReadContradictsIsTheServers() {
        let spend = appSpend(1, 7, comment: "x", sent: t0, balance: 1_240)
        let events = Self.compare(Self.after(1_243, [R.e("n1", 7, comment: "x", at: Self.t1)]), app: [spend])
        #expect(R.findings(events) == [.answerContradicted])
        let finding = Self.finding(events, .answerContradicted)
        #expect(finding?.text(names: R.names) == "[answer-contradicted] expected balance 1,240, as the answer to the app's POST spend_cheer 7 on Rain on a Tin Roof “x” (rq-a1) said, got balance 1,243 in the next read")
        #expect(finding?.requestIDs == ["rq-a1"] + Self.ids)
        // The last answered of several, one after another, is what the read must show.
        let first = appSpend(1, 7, sent: t0, balance: 1_243), then = appPurchase(2, bundle: 100, transaction: 7, sent: t0.addingTimeInterval(1), balance: 1_343)
        #expect(R.findings(Self.compare(Self.after(1_343, [R.e("n1", 7, at: Self.t1)]), app: [first, then])).isEmpty)
        var wrong = then
        wrong.balance = 1_350
        #expect(R.findings(Self.compare(Self.after(1_343, [R.e("n1", 7, at: Self.t1)]), app: [first, wrong])) == [.answerContradicted])
        // Overlapping writes: which answer was last on the server cannot be told, so none is held to the read.
        let overlapping = appPurchase(2, bundle: 100, transaction: 7, sent: t0.addingTimeInterval(0.1), answered: t0.addingTimeInterval(0.15), balance: 1_350)
        #expect(R.findings(Self.compare(Self.after(1_343, [R.e("n1", 7, at: Self.t1)]), app: [first, overlapping])).isEmpty)
    }

    @Test func theAppIsBlamedOnlyForItsOwnDoings() {
        let apps = WatchCheck.allCases.filter { $0.blame == .app }
        #expect(apps == [.doubleSubmission, .retryNewTransaction])
        #expect([WatchCheck.entryTwice, .creditMismatch, .notCredited, .replayCredited, .answerContradicted, .debitMismatch].allSatisfy { $0.blame == .server })
    }

    @Test func causeWords() {
        #expect(ChangeCause.words([]) == nil)
        #expect(ChangeCause.words([.app(requestID: "rq-1"), .app(requestID: "rq-2"), .tool, .elsewhere]) == "app, rq-1, rq-2; this tool; made elsewhere")
        #expect(ChangeCause.words([.app(requestID: nil)]) == "app, no request id")
    }
}

/// Ordinary app writes, each read back as the server would record it: never a finding.
extension PairingTests {
    @Test func randomOrdinaryAppWritesNeverMakeAFinding() {
        var rng = SeededGenerator(seed: 30)
        let products = [rainPack, "com.reiterate.pack.cafe-flore", "com.reiterate.pack.tokyo-night"]
        var last = R.read(5_000, R.older, total: 100)
        var clock = t0, serial = 0, transaction = 1_000
        for span in 0..<200 {
            var writes: [AppWrite] = [], fresh: [CheerHistoryEntry] = []
            var balance = last.balance
            for _ in 0..<Int.random(in: 0...4, using: &rng) {
                serial += 1
                clock = clock.addingTimeInterval(Double.random(in: 0.3...3, using: &rng))
                if Bool.random(using: &rng), balance > 100 {
                    let amount = Int.random(in: 1...99, using: &rng), product = products.randomElement(using: &rng) ?? rainPack
                    let comment = Bool.random(using: &rng) ? "c\(Int.random(in: 0...2, using: &rng))" : nil
                    let refused = Int.random(in: 0..<8, using: &rng) == 0  // a 402 now and then: no entry, no debit
                    if !refused {
                        balance -= amount
                        fresh.insert(R.e("s\(serial)", amount, product: product, comment: comment, at: clock), at: 0)
                    }
                    writes.append(appSpend(serial, amount, on: product, comment: comment, sent: clock, status: refused ? 402 : 200, balance: refused ? nil : balance))
                } else {
                    let bundle = CheerBundle.standIn.randomElement(using: &rng)?.cheer ?? 50
                    balance += bundle
                    transaction += 1
                    writes.append(appPurchase(serial, bundle: bundle, transaction: TransactionID(integerLiteral: UInt64(transaction)), sent: clock, balance: balance))
                }
            }
            clock = clock.addingTimeInterval(1)
            let after = Observation(at: clock, balance: balance, entries: Array((fresh + last.entries).prefix(20)), total: last.total + fresh.count)
            let events = Reconciler.compare(last, after, bundles: R.bundles, app: writes, catalog: CheerBundle.standIn)
            #expect(R.findings(events).isEmpty, "span \(span): \(Self.texts(events))")
            #expect(!events.contains { $0.causes.contains(.elsewhere) || $0.text().contains("possible double submission") }, "span \(span): \(Self.texts(events))")
            last = after
        }
    }
}

/// A small deterministic generator (SplitMix64), so a failure names a run that can be repeated.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// An app write as the proxy saw it.
@Suite struct AppWriteFromExchangeTests {
    static let contract = Contract.builtIn()
    static func exchange(_ path: String, method: RequestMethod = .post, query: [RequestKey.QueryItem] = [], body: String?, source: ExchangeSource = .app,
                         answer: (status: Int, body: String)? = nil, requestID: String? = "rq-9", fault: FaultNote? = nil) -> HTTPExchange {
        // The operation decided as the proxy decides it when it makes the exchange: from the contract.
        let request = ExchangeRequest(key: RequestKey(method, path, query: query), match: Self.contract.match(method: method.rawValue, path: path), headers: [:],
                                      body: body.map { Array($0.utf8) })
        let sent = ContinuousClock.now
        var e = HTTPExchange(serial: 9, source: source, request: request, startedAt: t0, sentAt: sent, attempt: 1)
        if let answer {
            let bytes = Array(answer.body.utf8)
            e.response = ExchangeResponse(status: answer.status, headers: [:], body: bytes, tokens: JSONTokenizer.tokens(bytes))
            e.answeredAt = sent.advanced(by: .milliseconds(250))
        }
        e.requestID = requestID
        e.fault = fault
        return e
    }

    @Test func aSpendWithItsCommentAndTheUserFromTheQuery() {
        let e = Self.exchange("/api/v1/spend_cheer", query: [.init("user_id", "qa-alice")],
                              body: #"{"product":"com.reiterate.pack.rain","amount":7,"comment":"great pack"}"#, answer: (200, #"{"balance":1243}"#))
        let write = AppWrite.from(e)
        #expect(write == AppWrite(id: 9, kind: .spend(product: rainPack, amount: 7, comment: "great pack"), user: "qa-alice", sentAt: t0,
                                  answeredAt: t0.addingTimeInterval(0.25), status: 200, balance: 1_243, requestID: "rq-9"))
        #expect(write?.request(names: R.names) == "POST spend_cheer 7 on Rain on a Tin Roof “great pack”" && write?.outcome == "→ 200 (balance 1,243)")
        #expect(write?.applied == true && write?.delivered == true && write?.answerLost == false)
    }

    typealias R = ReconcileTests

    @Test func aPurchaseWithAnIntegerTransactionIDAndTheUserFromTheBody() {
        let e = Self.exchange("/api/v2/purchase_cheer", body: #"{"identifier":"com.reiterate.cheer.200","transaction_id":42,"user_id":"qa-bob"}"#,
                              answer: (200, #"{"balance":1450}"#), fault: .loseAnswer)
        let write = AppWrite.from(e, answeredAt: t0.addingTimeInterval(3))
        #expect(write?.kind == .purchase(identifier: "com.reiterate.cheer.200", transactionID: 42) && write?.user == "qa-bob")
        #expect(write?.answeredAt == t0.addingTimeInterval(3) && write?.fault == .loseAnswer && write?.answerLost == true)
        #expect(write?.outcome == "→ 200 (balance 1,450), not delivered (lose_answer)")
        #expect(write?.request() == "POST purchase_cheer com.reiterate.cheer.200 tx 42")
        // A transaction id sent as text keeps its quotes (it is not the contract's number).
        let text = Self.exchange("/api/v2/purchase_cheer", body: #"{"identifier":"com.reiterate.cheer.200","transaction_id":"abc"}"#)
        #expect(AppWrite.from(text)?.purchase?.transactionID == .text("abc") && AppWrite.from(text)?.request().hasSuffix("tx \"abc\"") == true)
        // Sent, no answer yet: out.
        #expect(AppWrite.from(text).map { $0.answeredAt == nil && $0.status == nil && $0.outcome == "→ waiting" } == true)
        #expect(AppWrite.from(text)?.user == nil)
    }

    @Test func notAnAppWriteIsNil() {
        let spend = #"{"product":"p","amount":7}"#
        #expect(AppWrite.from(Self.exchange("/api/v1/spend_cheer", method: .get, body: spend)) == nil)
        #expect(AppWrite.from(Self.exchange("/api/v1/spend_cheer", body: spend, source: .tool)) == nil)
        #expect(AppWrite.from(Self.exchange("/api/v1/auth/refresh", body: spend)) == nil)
        #expect(AppWrite.from(Self.exchange("/api/v1/spend_cheer", body: nil)) == nil)
        #expect(AppWrite.from(Self.exchange("/api/v1/spend_cheer", body: "amount=7")) == nil)
        #expect(AppWrite.from(Self.exchange("/api/v1/spend_cheer", body: #"{"product":"p","amount":"7"}"#)) == nil)
        #expect(AppWrite.from(Self.exchange("/api/v2/purchase_cheer", body: #"{"identifier":"com.reiterate.cheer.200"}"#)) == nil)
        #expect(AppWrite.from(Self.exchange("/api/v1/spend_cheer", body: "[1,2]")) == nil)
    }
}
