import Foundation
import HTTPTypes
import ShopAPI
import ShopViewModels
import StubServer
import Testing
@testable import ShopProbes

/// `explore`'s campaign (issue 45): its cases come from the contract's document and the shop's model; its model
/// judges writes by the orders that explain them; a failing sequence shrinks; runs against the stand-in in this
/// process on 127.0.0.1.
@Suite(.serialized) struct ExploreTests {
    static let bundles = [CheerBundle(identifier: "com.reiterate.cheer.50", cheer: 50), CheerBundle(identifier: "com.reiterate.cheer.5000", cheer: 5000)]

    static func inputs(_ contract: Contract = Contract.builtIn(), writers: [String] = ["qa-alice"]) -> ExploreInputs {
        ExploreInputs(contract: contract, bundles: bundles, writers: writers, appStoreVerifies: false, expiredToken: false)
    }

    /// Runs `cases` against a fresh stand-in with `faults`, unpaced.
    static func run(_ cases: [ExploreCase], faults: [String] = [], budget: Int = 400, writer: String? = "qa-alice") async throws -> (outcomes: [ExploreOutcome], sent: Int) {
        try await withStandIn(faults: faults) { client, _ in
            let wire = ExploreWire(client: client, pacer: Pacer(perSecond: 0), budget: budget)
            let run = ExploreRun(wire: wire, reader: "qa-alice", writer: writer, bundles: bundles, expiredToken: nil) {
                await client.exchanges.all().last.map { $0.id + 1 } ?? 0
            }
            let outcomes = try await run.run(cases) { _ in }
            return (outcomes, await wire.sent)
        }
    }

    static func named(_ names: String...) -> [ExploreCase] {
        let all = ExploreCase.catalogue(inputs()).cases
        return names.compactMap { n in all.first { $0.name == n } }
    }

    // MARK: The catalogue

    @Test func theCasesComeFromTheDocumentsParametersAndSecurity() {
        let (cases, omitted) = ExploreCase.catalogue(Self.inputs())
        let names = Set(cases.map(\.name))
        // per_page's minimum, maximum and default; page's minimum (its default is the same) and the page after the last.
        for n in ["legal-getCheerHistory-per_page-1", "legal-getCheerHistory-per_page-200", "legal-getCheerHistory-per_page-50",
                  "legal-getCheerHistory-page-1", "legal-getCheerHistory-page-past-last", "legal-spendCheer-amount-1",
                  "legal-purchaseCheer-transaction-uint64"] {
            #expect(names.contains(n), "\(n)")
        }
        // Every operation that takes a token (all but auth/refresh) with each token the environment can give.
        let auth = cases.filter { $0.family == .auth }
        #expect(auth.count == 5 * 3 && !auth.contains { $0.name.contains("refreshToken") })
        #expect(omitted.contains { $0.what == "an expired token" } && omitted.contains { $0.what == "refreshToken" })
        // The edges write last among the writes: they spend the whole balance, and their purchases refill it.
        let families = cases.map(\.family)
        #expect(families.firstIndex(of: .edges)! > families.lastIndex(of: .text)!)
        #expect(cases.filter { $0.family == .text }.count == HardText.all.count)
    }

    @Test func aNewParameterInTheDocumentGainsItsCasesWithoutCode() throws {
        let builtIn = Contract.builtIn()
        let packs = try #require(builtIn.operation(.listAudioPacks))
        let limit = ContractParameter(name: "limit", location: .query, required: false, schema: ContractSchema(["integer"], minimum: 1, maximum: 10, defaultNumber: 5))
        let widened = ContractOperation(operationId: packs.operationId, method: packs.method, path: packs.path, parameters: packs.parameters + [limit],
                                        requestBody: packs.requestBody, responses: packs.responses, requiresAuth: false)
        let contract = Contract(operations: builtIn.operations.map { $0.operationId == packs.operationId ? widened : $0 }, error: builtIn.error, source: "test")
        let cases = ExploreCase.catalogue(Self.inputs(contract)).cases
        #expect(Set(cases.map(\.name)).isSuperset(of: ["legal-listAudioPacks-limit-1", "legal-listAudioPacks-limit-10", "legal-listAudioPacks-limit-5"]))
        // An operation the document says takes no token has no auth case.
        #expect(!cases.contains { $0.name.hasPrefix("auth-listAudioPacks") })
        #expect(cases.first { $0.name == "legal-listAudioPacks-limit-10" }?.source == "contract: listAudioPacks limit maximum 10")
    }

    @Test func selectingByFamilyOrNameAndRefusingAnUnknownName() throws {
        let all = ExploreCase.catalogue(Self.inputs()).cases
        #expect(try ExploreCase.select(all, only: "edges, text-comment-rtl").map(\.name)
            == all.filter { $0.family == .edges || $0.name == "text-comment-rtl" }.map(\.name))
        #expect(throws: ExploreCase.UnknownNames.self) { try ExploreCase.select(all, only: "edgez") }
    }

    // MARK: The model

    @Test func anOrderOfTheWritesMustExplainEveryAnswer() async throws {
        let run = ExploreRun(wire: ExploreWire(client: try Self.idleClient(), pacer: Pacer(perSecond: 0), budget: 1), reader: "a", writer: "a", bundles: Self.bundles,
                             expiredToken: nil) { 0 }
        let two = [ExploreWrite.spend(.halfPlusOne), .spend(.halfPlusOne)]
        // From 1,000: 501 + 501 cannot both be taken; one taken and one refused 402 is explained, either way round.
        #expect(run.explained(two, statuses: [200, 200], transactions: [nil, nil], balance: 1000) == nil)
        #expect(run.explained(two, statuses: [402, 200], transactions: [nil, nil], balance: 1000)?.balance == 499)
        // A spend that fits refused 402 is explained by no order; one that does not fit, refused with another 4xx, neither.
        #expect(run.explained([.spend(.wholeBalance)], statuses: [402], transactions: [nil], balance: 7) == nil)
        #expect(run.explained([.spend(.balancePlusOne)], statuses: [400], transactions: [nil], balance: 7) == nil)
        #expect(run.explained([.spend(.balancePlusOne)], statuses: [402], transactions: [nil], balance: 7)?.balance == 7)
        // One transaction twice: one 200 and one 409 (credited once); two 200s are credited twice.
        let same = [ExploreWrite.purchase(.smallest, slot: 1), .purchase(.smallest, slot: 1)]
        #expect(run.explained(same, statuses: [409, 200], transactions: [9, 9], balance: 0)?.balance == 50)
        #expect(run.explained(same, statuses: [200, 200], transactions: [9, 9], balance: 0) == nil)
        #expect(ExploreRun.orders(3).count == 6 && Set(ExploreRun.orders(3).map { $0.sorted() }) == [[0, 1, 2]])
    }

    @Test func aSequenceShrinksByAStepOrByAWriteSentAtOnce() {
        let steps = [ExploreStep(.spend(.wholeBalance)), ExploreStep(.spend(.literal(1)), .spend(.literal(1)))]
        let simpler = ExploreRun.simpler(steps)
        #expect(simpler.contains([ExploreStep(.spend(.literal(1)), .spend(.literal(1)))]))
        #expect(simpler.contains([ExploreStep(.spend(.wholeBalance))]))
        // The two writes at once are the same: dropping either is one candidate, not two.
        #expect(simpler.filter { $0 == [ExploreStep(.spend(.wholeBalance)), ExploreStep(.spend(.literal(1)))] }.count == 1)
        #expect(simpler.count == 3)
        #expect(ExploreRun.simpler([ExploreStep(.spend(.literal(1)))]).isEmpty)
    }

    @Test func aTextDifferenceShowsBothSidesFromWhereTheyPart() {
        let (sent, back, at) = TextDifference.shown("a <b> c", "a &lt;b&gt; c")
        #expect(sent == "a <b> c" && back == "a &lt;b&gt; c" && at.contains("from character 3"))
        #expect(TextDifference.escaped("e\u{301}\u{202E}") == "e\\u{301}\\u{202E}")
        #expect(TextDifference.shown("x", nil).1 == "no comment")
    }

    @Test func whatASharedCacheMayStore() {
        func answer(_ cacheControl: String?) -> ProbeAnswer {
            var headers = HTTPFields()
            if let cacheControl { headers[.cacheControl] = cacheControl }
            return ProbeAnswer(status: 200, headers: headers, body: [])
        }
        #expect(answer(nil).sharedCacheable == nil)
        #expect(answer("max-age=60").sharedCacheable == nil)  // a request with Authorization: not for a shared cache
        #expect(answer("public, max-age=60").sharedCacheable == "Cache-Control: public, max-age=60")
        #expect(answer("s-maxage=30").sharedCacheable != nil)
        #expect(answer("public, private").sharedCacheable == nil && answer("public, no-store").sharedCacheable == nil)
    }

    @Test func newEntriesAreToldByIdOrByContentWhenTheServerSendsNoIds() {
        let at = Date(timeIntervalSince1970: 1_800_000_000)
        func entry(_ id: String?, _ amount: Int, _ comment: String? = nil) -> CheerHistoryEntry {
            CheerHistoryEntry(id: id, creator: "c", amount: amount, product: "p", date: at, comments: comment.map { [CheerComment(signature: nil, body: $0)] })
        }
        #expect(ExploreRun.fresh([entry("3", 1), entry("2", 5), entry("1", 7)], since: [entry("2", 5), entry("1", 7)]) == [entry("3", 1)])
        // No ids (the contract makes them optional): by content, each old entry accounting for one equal new one.
        #expect(ExploreRun.fresh([entry(nil, 1), entry(nil, 1), entry(nil, 7)], since: [entry(nil, 1), entry(nil, 7)]) == [entry(nil, 1)])
        #expect(ExploreRun.fresh([entry(nil, 1, "hi"), entry(nil, 7)], since: [entry(nil, 7)]).count == 1)
        #expect(ExploreRun.fresh([entry(nil, 7)], since: [entry(nil, 7)]).isEmpty)
    }

    @Test func noTokenOrBearerAloneMayBeRefusedWithAny4xxButAnUnknownTokenGets401() async throws {
        let run = ExploreRun(wire: ExploreWire(client: try Self.idleClient(), pacer: Pacer(perSecond: 0), budget: 1), reader: "a", writer: "a", bundles: Self.bundles,
                             expiredToken: nil) { 0 }
        let c = Self.named("auth-getBalance-none")[0]
        #expect(run.authVerdict(c, .none, status: 400, said: "HTTP 400", subject: "s", ids: [], applied: nil).verdict == .passed)
        #expect(run.authVerdict(c, .malformed, status: 403, said: "HTTP 403", subject: "s", ids: [], applied: nil).verdict == .passed)
        #expect(run.authVerdict(c, .unknown, status: 403, said: "HTTP 403", subject: "s", ids: [], applied: nil).findings.first?.kind == .explore(.authStatus))
        #expect(run.authVerdict(c, .none, status: 200, said: "200", subject: "s", ids: [], applied: nil).findings.first?.kind == .explore(.ignoredAuth))
        // A refusal whose write was applied all the same is the security finding.
        #expect(run.authVerdict(c, .unknown, status: 401, said: "HTTP 401", subject: "s", ids: [], applied: "the balance moved").findings.first?.kind == .explore(.ignoredAuth))
        #expect(run.authVerdict(c, .unknown, status: 503, said: "HTTP 503", subject: "s", ids: [], applied: nil).verdict == .notJudged)
    }

    @Test func everyCaseReadsBackFromItsFileInWordsAPersonCanEdit() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        for c in ExploreCase.catalogue(Self.inputs()).cases {
            #expect(try JSONDecoder().decode(ExploreCase.self, from: encoder.encode(c)) == c, "\(c.name)")
        }
        let plan = { (name: String) in String(decoding: try encoder.encode(Self.named(name)[0].plan), as: UTF8.self) }
        #expect(try plan("concurrent-overspend") == #"{"writes":[[{"spend":"half+1"},{"spend":"half+1"}]]}"#)
        #expect(try plan("concurrent-transaction-replayed") == #"{"writes":[[{"purchase":"smallest","slot":1},{"purchase":"smallest","slot":1}]]}"#)
        #expect(try plan("legal-getCheerHistory-page-past-last") == #"{"query":{"page":{"is":"the page after the last"},"user_id":{"is":"the user"}},"read":"getCheerHistory"}"#)
        #expect(try plan("auth-getBalance-none") == #"{"auth":"getBalance","token":"no token"}"#)
    }

    @Test func aCaseFileNoCampaignMakesIsNotRead() throws {
        let c = Self.named("concurrent-overspend")[0]
        var o = ExploreOutcome(c, .finding)
        o.shrunk = nil
        let good = try JSONEncoder().encode(ExploreCaseFile(o, environment: "local"))
        #expect(ExploreCaseFile.read(good)?.exploreCase == c)
        for name in ["../../etc/x", ".hidden", "a b", String(repeating: "a", count: 81)] {
            var bad = ExploreCaseFile(o, environment: "local")
            bad.exploreCase.name = name
            #expect(ExploreCaseFile.read(try JSONEncoder().encode(bad)) == nil, "\(name)")
        }
        var wide = ExploreCaseFile(o, environment: "local")
        wide.exploreCase.plan = .writes([ExploreStep(writes: Array(repeating: .spend(.literal(1)), count: 4))])
        #expect(ExploreCaseFile.read(try JSONEncoder().encode(wide)) == nil)
    }

    @Test func aLaggingReplicaIsNamedStaleReadNotAWrongBalance() async throws {
        let (outcomes, _) = try await Self.run(Self.named("legal-spendCheer-amount-1", "text-comment-rtl"), faults: ["stale_read,ms=1000"])
        #expect(outcomes.count == 2)
        for o in outcomes {
            #expect(o.findings.map(\.kind) == [.contract(.staleRead)], "\(o.exploreCase.name): \(o.findings.map(\.line))")
        }
    }

    // MARK: Against the stand-in

    @Test func theCleanStandInPassesEveryCaseWithinTheBudget() async throws {
        let cases = ExploreCase.catalogue(Self.inputs()).cases
        let (outcomes, sent) = try await Self.run(cases)
        #expect(outcomes.count == cases.count)
        #expect(outcomes.allSatisfy { $0.verdict == .passed }, "\(outcomes.filter { $0.verdict != .passed }.map { ($0.exploreCase.name, $0.note ?? "", $0.findings.map(\.line)) })")
        #expect(sent > 100 && sent <= 400)
    }

    @Test func aRaceIsShrunkNoFurtherThanItsTwoWritesAtOnce() async throws {
        let (outcomes, _) = try await Self.run(Self.named("concurrent-overspend"), faults: ["race_overspend"])
        let o = try #require(outcomes.first)
        #expect(o.verdict == .finding && o.findings.first?.kind == .explore(.concurrentWrites))
        #expect(o.findings.contains { $0.actual == "-1" || $0.actual.hasPrefix("-") })
        #expect(o.shrunk == [ExploreStep(.spend(.halfPlusOne), .spend(.halfPlusOne))])
    }

    @Test func aWrongDebitNeedsNoRaceAndShrinksToOneWrite() async throws {
        let (outcomes, _) = try await Self.run(Self.named("concurrent-same-spend"), faults: ["wrong_debit"])
        let o = try #require(outcomes.first)
        #expect(o.verdict == .finding && o.findings.allSatisfy { $0.kind == .explore(.writeEffect) })
        #expect(o.shrunk == [ExploreStep(.spend(.literal(1)))])
    }

    @Test func theBudgetStopsTheCampaignAndSaysSo() async throws {
        let (outcomes, sent) = try await Self.run(ExploreCase.catalogue(Self.inputs()).cases, budget: 25)
        #expect(sent <= 25)
        #expect(outcomes.last?.note == ExploreRun.budgetWords && outcomes.last?.verdict == .notJudged)
    }

    @Test func noWriteIsSentWithoutAnExploreUser() async throws {
        let (outcomes, _) = try await Self.run(Self.named("edge-whole-balance", "legal-getBalance"), writer: nil)
        #expect(outcomes.map(\.verdict) == [.notJudged, .passed])
        #expect(outcomes[0].note?.contains("names no explore user") == true)
    }

    @Test func aMarkupCommentComesBackEscapedAndTheFindingShowsBoth() async throws {
        let (outcomes, _) = try await Self.run(Self.named("text-comment-markup"), faults: ["escape_markup"])
        let f = try #require(outcomes.first?.findings.first)
        #expect(f.kind == .explore(.textChanged) && f.blame == .server)
        #expect(f.expected.contains("<b>bold</b>") && f.actual.contains("&lt;b&gt;bold"))
        #expect(f.requestIDs.count >= 2)
    }

    /// A client that is never used to send (the model's judgement needs none).
    static func idleClient() throws -> ShopClient {
        ShopClient(configuration: ShopClientConfiguration(baseURL: "http://127.0.0.1:9"), transport: try AsyncHTTPTransport(configuration: .init()),
                   tokens: TokenStore(accessToken: "x", refreshToken: nil))
    }
}
