import Foundation
import ShopAPI
import ShopViewModels

// The campaign's cases, made from the contract's document (operations, parameters and their bounds, bodies, which
// take a token) and the shop's model (its packs, bundles, users, the balance's edges): a new parameter or
// operation in the document gains its cases without code. The cases as words, before anything is sent.

extension ExploreCase {
    /// Every case the document and the model give, in the order they are sent, and what is left out.
    public static func catalogue(_ inputs: ExploreInputs) -> (cases: [ExploreCase], omitted: [ExploreOmission]) {
        var cases: [ExploreCase] = []
        var omitted: [ExploreOmission] = []
        let canBuy = !inputs.appStoreVerifies && !inputs.bundles.isEmpty
        let buyWhy = inputs.bundles.isEmpty ? "the environment names no bundle"
            : "the environment checks purchases with the App Store: a purchase needs a real sandbox transaction"
        let operations = inputs.contract.operations.compactMap { op in OperationID(rawValue: op.operationId).map { ($0, op) } }

        // 1. Legal requests: each read with its parameters at their extremes and defaults; each write at its minimum.
        for (id, op) in operations where op.method == "GET" {
            var base: [String: ExploreQueryValue] = [:]
            var unknown: [String] = []
            for p in op.parameters where p.required {
                if p.name == "user_id" { base[p.name] = .user } else { unknown.append(p.name) }
            }
            guard unknown.isEmpty else {
                omitted.append(ExploreOmission(what: "legal reads of \(id.rawValue)", why: "no value is known for its required \(unknown.joined(separator: ", "))"))
                continue
            }
            cases.append(ExploreCase(name: "legal-\(id.rawValue)", family: .legal, what: "\(id.rawValue) with its required parameters only",
                                     source: "contract: \(id.rawValue) parameters", plan: .read(id, query: base)))
            for p in op.parameters where !p.required && p.location == .query {
                guard let schema = p.schema, schema.type.contains("integer") else { continue }
                var seen = Set<Int>()
                let extremes: [(String, Double?)] = [("minimum", schema.minimum), ("maximum", schema.maximum), ("default", schema.defaultNumber)]
                for (rule, bound) in extremes {
                    guard let bound, let value = Int(exactly: bound), seen.insert(value).inserted else { continue }
                    var query = base
                    query[p.name] = .literal(String(value))
                    cases.append(ExploreCase(name: "legal-\(id.rawValue)-\(p.name)-\(value)", family: .legal, what: "\(id.rawValue) with \(p.name)=\(value)",
                                             source: "contract: \(id.rawValue) \(p.name) \(rule) \(value)", plan: .read(id, query: query)))
                }
                if p.name == "page" {
                    var query = base
                    query[p.name] = .pastLastPage
                    cases.append(ExploreCase(name: "legal-\(id.rawValue)-page-past-last", family: .legal, what: "\(id.rawValue) with the page after the last",
                                             source: "contract: \(id.rawValue) page minimum \(schema.minimum.map { "\(Int($0))" } ?? "1"), no maximum",
                                             plan: .read(id, query: query)))
                }
            }
        }
        for (id, op) in operations where op.method == "POST" {
            switch id {
            case .spendCheer:
                let minimum = op.requestBody?.schema?.properties?["amount"]?.minimum.flatMap { Int(exactly: $0) } ?? 1
                cases.append(ExploreCase(name: "legal-spendCheer-amount-\(minimum)", family: .legal, what: "a spend of \(minimum) (the smallest amount)",
                                         source: "contract: spendCheer amount minimum \(minimum)", plan: .writes([ExploreStep(.spend(.literal(minimum)))])))
            case .purchaseCheer where canBuy:
                let format = op.requestBody?.schema?.properties?["transaction_id"]?.format
                if format == "uint64" {
                    cases.append(ExploreCase(name: "legal-purchaseCheer-transaction-uint64", family: .legal,
                                             what: "a purchase whose transaction id lies above 2^63 (an uint64 a signed 64-bit column cannot hold)",
                                             source: "contract: purchaseCheer transaction_id format uint64",
                                             plan: .writes([ExploreStep(.purchase(.smallest, wide: true))])))
                }
            case .purchaseCheer:
                omitted.append(ExploreOmission(what: "purchases (legal, edges, concurrent)", why: buyWhy))
            case .refreshToken:
                omitted.append(ExploreOmission(what: "refreshToken", why: "not sent: it would rotate the environment's refresh token"))
            default: break
            }
        }

        // 2. Authentication: every operation that takes a token, without a valid one.
        let variants = ExploreAuth.allCases.filter { $0 != .expired || inputs.expiredToken }
        if !inputs.expiredToken {
            omitted.append(ExploreOmission(what: "an expired token", why: "REITERATE_EXPIRED_TOKEN is not set (an access token the server issued that has expired)"))
        }
        for (id, op) in operations where op.requiresAuth {
            if id == .purchaseCheer, !canBuy { continue }
            for variant in variants {
                cases.append(ExploreCase(name: "auth-\(id.rawValue)-\(variant.slug)", family: .auth, what: "\(id.rawValue) with \(variant.rawValue)",
                                         source: "contract: an expired or unknown token gets 401", plan: .auth(id, variant)))
            }
        }

        // 3. The shop's edges, from the model.
        let smallest = inputs.bundles.min { $0.cheer < $1.cheer }
        let largest = inputs.bundles.max { $0.cheer < $1.cheer }
        cases.append(ExploreCase(name: "edge-balance-plus-one", family: .edges, what: "a spend of the balance + 1",
                                 source: "contract: spendCheer 402 when the balance is too low; nothing is spent", plan: .writes([ExploreStep(.spend(.balancePlusOne))])))
        cases.append(ExploreCase(name: "edge-whole-balance", family: .edges, what: "a spend of the whole balance",
                                 source: "shop rule: a spend of at most the balance is taken", plan: .writes([ExploreStep(.spend(.wholeBalance))])))
        cases.append(ExploreCase(name: "edge-user-with-nothing", family: .edges, what: "the whole balance spent, then a spend of 1",
                                 source: "contract: spendCheer 402 when the balance is too low",
                                 plan: .writes([ExploreStep(.spend(.wholeBalance)), ExploreStep(.spend(.literal(1)))])))
        if canBuy, let smallest, let largest {
            cases.append(ExploreCase(name: "edge-smallest-bundle", family: .edges, what: "a purchase of the smallest bundle (\(smallest.cheer) cheer)",
                                     source: "shop rule: a purchase credits its bundle's cheer", plan: .writes([ExploreStep(.purchase(.smallest))])))
            if largest != smallest {
                cases.append(ExploreCase(name: "edge-largest-bundle", family: .edges, what: "a purchase of the largest bundle (\(largest.cheer) cheer)",
                                         source: "shop rule: a purchase credits its bundle's cheer", plan: .writes([ExploreStep(.purchase(.largest))])))
            }
        }
        if !inputs.appStoreVerifies {
            omitted.append(ExploreOmission(what: "quantities", why: "a purchase's quantity is the App Store's record's: the environment has no [appstore] table"))
        }

        // 4. Writes at the same time.
        cases.append(ExploreCase(name: "concurrent-same-spend", family: .concurrent, what: "the same spend of 1, twice at once",
                                 source: "shop rule: the balance changes by the writes applied", plan: .writes([ExploreStep(.spend(.literal(1)), .spend(.literal(1)))])))
        cases.append(ExploreCase(name: "concurrent-overspend", family: .concurrent, what: "two spends of half the balance + 1 at once (their sum exceeds it)",
                                 source: "contract: spendCheer 402 when the balance is too low; shop rule: the balance never goes below 0",
                                 plan: .writes([ExploreStep(.spend(.halfPlusOne), .spend(.halfPlusOne))])))
        if canBuy {
            cases.append(ExploreCase(name: "concurrent-transaction-replayed", family: .concurrent, what: "one purchase's transaction posted twice at once",
                                     source: "contract: a transaction is credited once; a second call answers 409",
                                     plan: .writes([ExploreStep(.purchase(.smallest, slot: 1), .purchase(.smallest, slot: 1))])))
        }

        // 5. Text that goes in comes back: each free-text field of a write (a string the model does not read as
        // an identifier), with each hard string.
        for (id, op) in operations where op.method == "POST" && id == .spendCheer {
            let identifiers: Set<String> = ["product", "identifier"]
            for (field, schema) in (op.requestBody?.schema?.properties ?? [:]).sorted(by: { $0.key < $1.key })
            where schema.type.contains("string") && !identifiers.contains(field) {
                guard field == "comment" else {
                    omitted.append(ExploreOmission(what: "text in \(id.rawValue) \(field)", why: "the model knows no read that gives it back"))
                    continue
                }
                for (name, text) in HardText.all {
                    cases.append(ExploreCase(name: "text-\(field)-\(name)", family: .text, what: "a spend of 1 with a \(name) \(field), read back",
                                             source: "contract: \(id.rawValue) \(field) type string; shop rule: an entry keeps its comment",
                                             plan: .roundTrip(field: field, text: text)))
                }
            }
        }

        // 6. Identity and framing.
        let identity: [(ExploreIdentity, String, String)] = [
            (.uniqueIDs, "every page of the history: no id on two entries", "contract: CheerHistoryEntry id; shop rule: an id names one entry"),
            (.stableEntries, "the first page read twice: each entry the same", "shop rule: an entry never changes"),
            (.charset, "each read's body valid in the charset it claims", "contract: Content-Type application/json, possibly with a charset"),
            (.sharedCache, "each per-user answer not storable by a shared cache", "RFC 9111 §3.5: a request with Authorization"),
            (.serverClock, "entries dated within the server's clock (its Date header)", "contract: dates are ISO 8601 in UTC; RFC 9110 Date"),
        ]
        for (check, what, source) in identity {
            cases.append(ExploreCase(name: "identity-\(check.rawValue)", family: .identity, what: what, source: source, plan: .identity(check)))
        }
        // Sent in this order: the edges last among the writes (they spend the whole balance, then the purchases refill it).
        let order: [ExploreFamily] = [.legal, .auth, .concurrent, .text, .edges, .identity]
        let sorted = order.flatMap { f in cases.filter { $0.family == f } }
        return (sorted, omitted)
    }
}

/// The campaign in words, before anything is sent.
public enum ExploreListing {
    /// A case as `--json` lists it (nothing sent).
    struct Listed: Encodable {
        var name: String
        var family: String
        var what: String
        var source: String
        var writes: Bool
    }

    /// `--json`: an object a case, then one a thing not covered (`{"not_covered": …, "why": …}`).
    public static func json(_ cases: [ExploreCase], omitted: [ExploreOmission]) -> String {
        let listed = cases.map { (try? Output.jsonLine(Listed(name: $0.name, family: $0.family.rawValue, what: $0.what, source: $0.source, writes: $0.writes))) ?? "" }
        return (listed + omitted.map { (try? Output.jsonLine(["not_covered": $0.what, "why": $0.why])) ?? "" }).joined()
    }

    /// A line a case (`name  what  [source]`), then what is not covered and why.
    public static func text(_ cases: [ExploreCase], omitted: [ExploreOmission]) -> String {
        var out = ""
        for c in cases { out += "\(c.name.padding(toLength: 40, withPad: " ", startingAt: 0)) \(c.what)  [\(c.source)]\n" }
        for o in omitted { out += "not covered: \(o.what): \(o.why)\n" }
        return out
    }

    /// What the cases will spend and buy as `writer`, said before they start (an edge case may spend a whole
    /// balance: a dedicated user keeps that out of other testers' way).
    public static func writes(_ cases: [ExploreCase], bundles: [CheerBundle], writer: String?) -> String {
        let writing = cases.filter(\.writes)
        guard !writing.isEmpty else { return "no case writes" }
        guard let writer else { return "\(writing.count) cases that write are not sent: the environment names no explore user (explore_users)" }
        var literal = 0
        var wholeBalances = 0
        var halves = 0
        var bought: [Int: Int] = [:]
        let smallest = bundles.map(\.cheer).min() ?? 0, largest = bundles.map(\.cheer).max() ?? 0
        func count(_ w: ExploreWrite) {
            switch w {
            case let .spend(.literal(n), _): literal += n
            case .spend(.wholeBalance, _): wholeBalances += 1
            case .spend(.halfPlusOne, _): halves += 1
            case .spend(.balancePlusOne, _): break  // refused by the shop, or a finding
            case let .purchase(b, _, _): bought[b == .smallest ? smallest : largest, default: 0] += 1
            }
        }
        for c in writing {
            switch c.plan {
            case let .writes(steps): steps.flatMap(\.writes).forEach(count)
            case .roundTrip: literal += 1
            case let .auth(op, _): if op == .spendCheer { literal += 1 } else { bought[smallest, default: 0] += 1 }  // only if the shop takes it
            default: break
            }
        }
        var spend: [String] = []
        if wholeBalances > 0 { spend.append("its whole balance \(wholeBalances == 1 ? "once" : "\(wholeBalances) times") (the edge cases; their purchases refill it after)") }
        if halves > 0 { spend.append("up to \(halves) × (half its balance + 1), at once") }
        if literal > 0 { spend.append("\(literal) cheer in spends of 1") }
        let buy = bought.sorted { $0.key < $1.key }.map { "\($0.value) × \($0.key)" }
        return "as \(writer) it will spend " + (spend.isEmpty ? "nothing" : spend.joined(separator: ", "))
            + (buy.isEmpty ? "" : "; and buy " + buy.joined(separator: " + ") + " cheer (fresh transaction ids)")
            + (wholeBalances > 0 ? "; an edge case leaves \(writer) with nothing for a while" : "")
    }
}

extension ExploreCase {
    /// Names given to `--only` that are neither a family nor a case.
    public struct UnknownNames: Error, Sendable { public var names: [String] }

    /// The cases `only` names (families or cases, comma-separated); all of them when nil.
    public static func select(_ cases: [ExploreCase], only: String?) throws(UnknownNames) -> [ExploreCase] {
        guard let only else { return cases }
        let wanted = Set(only.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        let unknown = wanted.subtracting(cases.map(\.name) + ExploreFamily.allCases.map(\.rawValue))
        guard unknown.isEmpty else { throw UnknownNames(names: unknown.sorted()) }
        return cases.filter { wanted.contains($0.name) || wanted.contains($0.family.rawValue) }
    }
}

extension ExploreCampaign {
    /// A campaign on `client`: every request through one wire (`pace`, `budget`), reads as `reader`, writes as
    /// `writer`; its files in `files`.
    public static func on(_ client: ShopClient, pace: Double, budget: Int, reader: String, writer: String?, bundles: [CheerBundle], expiredToken: String?,
                          files: ExploreFiles?, lines: OutputLines, json: Bool, progress: Bool) -> ExploreCampaign {
        let wire = ExploreWire(client: client, pacer: Pacer(perSecond: pace), budget: budget)
        let run = ExploreRun(wire: wire, reader: reader, writer: writer, bundles: bundles, expiredToken: expiredToken) {
            await client.exchanges.all().last.map { $0.id + 1 } ?? 0
        }
        return ExploreCampaign(run: run, client: client, files: files, lines: lines, json: json, progress: progress)
    }
}
