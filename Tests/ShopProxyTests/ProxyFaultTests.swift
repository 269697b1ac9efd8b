import Foundation
import JSONTokens
import NIOCore
import ShopAPI
import StubServer
import Testing
@testable import ShopProxy

/// Faults put into the app's traffic: how they are written, how they are spent, and what the app sees
/// of each on its socket while the pipeline records what the server did. Inside the proxy's serialized
/// suite: a `RawClient` blocks one of the few cooperative threads the in-process stand-in answers on,
/// and two suites doing so at once starve it.
extension ProxyServerTests {
    @Suite struct FaultTests: ProxyTesting {
        // MARK: Writing faults

        @Test func aFaultIsWrittenAsTheStandInsAreInTextAndJSON() throws {
            let text = try ProxyFault.parse("lose_answer,path=/api/v2/purchase_cheer,method=post,count=1")
            #expect(text.kind == .loseAnswer && text.path == "/api/v2/purchase_cheer" && text.method == "POST" && text.count == 1)
            #expect(text.summary == "lose_answer on POST /api/v2/purchase_cheer, next 1")
            let body = Array(#"{"kind":"lose_answer","path":"/api/v2/purchase_cheer","method":"POST","count":1}"#.utf8)
            #expect(try ProxyFault.from(json: try #require(JSONValue.parse(body))) == text)

            let latency = try ProxyFault.parse("kind=latency,ms=800,jitter=400,rate=0.5")
            #expect(latency.ms == 800 && latency.jitter == 400 && latency.rate == 0.5 && latency.path == "/api/*" && latency.method == nil)
            #expect(latency.summary == "latency 800 ms (+ up to 400 ms) on /api/*, 50% of requests")
            #expect(try ProxyFault.parse("status").status == 500)
            #expect(try ProxyFault.parse("html").status == 502)
            #expect(try ProxyFault.parse("rate_limit").retryAfter == 5)
            #expect(try ProxyFault.parse("hang").seconds == 120)
            #expect(try ProxyFault.parse("status,message=shop closed").message == "shop closed")
            #expect(try ProxyFault.parse("offline,count=3").summary == "offline: every request refused, next 3")
        }

        @Test(arguments: [
            ("", "kind"), ("stall", "stall"), ("status,status=200", "'status'"), ("status,colour=red", "'colour'"),
            ("latency,rate=2", "'rate'"), ("latency,ms=soon", "'ms'"), ("html,status=501", "html"), ("status,count=0", "'count'"),
            ("offline,path=/api/v1/balance", "offline"), ("status,method=FETCH", "'method'"), ("status,path=api", "'path'"),
            ("status,oops", "'oops'"),
        ])
        func aBadFaultIsOnePlainLineNamingWhatIsWrong(text: String, named: String) {
            #expect {
                _ = try ProxyFault.parse(text)
            } throws: { error in
                let line = (error as? ProxyFaultError)?.description ?? ""
                return line.contains(named) && !line.contains("\n")
            }
        }

        @Test func aNonObjectIsNotAFault() {
            #expect(throws: ProxyFaultError.self) { try ProxyFault.from(json: .array([])) }
        }

        // MARK: Spending faults

        @Test func aCountedFaultIsSpentOnceARequestThenGone() throws {
            let faults = ProxyFaults()
            let id = faults.add(try ProxyFault.parse("status,path=/api/v1/balance,count=2"))
            #expect(faults.take(method: "GET", path: "/api/v1/audio_packs") == nil)
            #expect(faults.take(method: "GET", path: "/api/v1/balance")?.kind == .status)
            #expect(faults.list().first?.remaining == 1 && faults.list().first?.hits == 1)
            #expect(faults.take(method: "GET", path: "/api/v1/balance") != nil)
            #expect(faults.take(method: "GET", path: "/api/v1/balance") == nil)
            #expect(faults.list().isEmpty && !faults.remove(id: id))
        }

        @Test func aRateHitsAboutThatShareRepeatablyFromASeed() throws {
            let fault = try ProxyFault.parse("status,rate=0.25")
            func hits(seed: UInt64) -> [Bool] {
                let faults = ProxyFaults([fault], seed: seed)
                return (0..<2000).map { _ in faults.take(method: "GET", path: "/api/v1/balance") != nil }
            }
            let first = hits(seed: 7)
            #expect((400...600).contains(first.filter { $0 }.count))
            #expect(hits(seed: 7) == first)
            #expect(hits(seed: 8) != first)
        }

        @Test func aFaultIsScopedByMethodAndPathAndTheFirstMatchWins() throws {
            let faults = ProxyFaults()
            faults.add(try ProxyFault.parse("reset,method=POST,path=/api/v?/spend_cheer"))
            faults.add(try ProxyFault.parse("status,path=/api/*"))
            #expect(faults.take(method: "POST", path: "/api/v1/spend_cheer")?.kind == .reset)
            #expect(faults.take(method: "GET", path: "/api/v1/spend_cheer")?.kind == .status)
            #expect(faults.take(method: "POST", path: "/api/v10/spend_cheer")?.kind == .status)
            #expect(faults.take(method: "GET", path: "/health") == nil)
            #expect(faults.takeForConnect() == nil)
            faults.add(try ProxyFault.parse("offline,count=1"))
            #expect(faults.takeForConnect()?.kind == .offline && faults.takeForConnect() == nil)
            #expect(PathGlob.matches("*", "") && PathGlob.matches("/a*b*c", "/aXbYbZc") && !PathGlob.matches("/a?", "/a"))
        }

        @Test func theControlIsForThisMachineOnly() throws {
            for loopback in ["127.0.0.1", "127.9.9.9", "::1", "::ffff:127.0.0.1"] {
                #expect(FaultControl.admits(peer: try SocketAddress(ipAddress: loopback, port: 5000)), "\(loopback)")
            }
            for other in ["192.0.2.1", "10.0.0.7", "::ffff:10.0.0.7", "2001:db8::1"] {
                #expect(!FaultControl.admits(peer: try SocketAddress(ipAddress: other, port: 5000)), "\(other)")
            }
            #expect(!FaultControl.admits(peer: nil))
        }

        // MARK: What the app sees

        @Test func latencyDelaysTheRequestThenForwardsIt() async throws {
            let (stub, proxy, transport, seen) = try await start(faults: [try ProxyFault.parse("latency,ms=300,path=/api/v1/balance")])
            let clock = ContinuousClock.now
            let answer = try RawClient(port: proxy.address.port).exchange(get(stub, "/api/v1/balance?user_id=qa-alice"))
            #expect(answer.status == 200 && ContinuousClock.now - clock >= .milliseconds(300))
            try await waitFor { await seen.exchanges.count == 1 }
            #expect(await seen.exchanges.first?.fault == InjectedFault.latency.note)
            #expect(proxy.stats.current.faults == 1)
            await stop(stub, proxy, transport)
        }

        @Test func statusHtmlAndRateLimitAnswerInTheServersSteadAndAreNotRecorded() async throws {
            let events = Events()
            let (stub, proxy, transport, seen) = try await start(events: events, faults: [
                try ProxyFault.parse("status,status=503,message=down for cheer,path=/api/v1/audio_packs,count=1"),
                try ProxyFault.parse("html,path=/api/v1/audio_packs,count=1"),
                try ProxyFault.parse("rate_limit,path=/api/v1/audio_packs,count=1"),
            ])
            let app = try RawClient(port: proxy.address.port)
            let status = try app.exchange(get(stub, "/api/v1/audio_packs"))
            #expect(status.status == 503 && status.body == #"{"code":"injected_fault","message":"down for cheer"}"#)
            let html = try app.exchange(get(stub, "/api/v1/audio_packs"))
            #expect(html.status == 502 && html.header("Content-Type") == "text/html" && html.body.contains("<h1>502 Bad Gateway</h1>"))
            let limited = try app.exchange(get(stub, "/api/v1/audio_packs"))
            #expect(limited.status == 429 && limited.header("Retry-After") == "5" && limited.body.contains(#""code":"rate_limited""#))
            // The same connection goes on, and with the faults spent the server answers.
            #expect(try app.exchange(get(stub, "/api/v1/audio_packs")).status == 200)
            #expect(await stub.recorder.requests(to: "/api/v1/audio_packs").count == 1)
            let injected = events.injected
            #expect(injected.map(\.fault) == [InjectedFault.status.note, InjectedFault.html.note, InjectedFault.rateLimit.note])
            #expect(injected.map { $0.response?.status } == [503, 502, 429] && injected.allSatisfy { $0.answeredAt != nil && $0.source == .app })
            try await waitFor { await seen.exchanges.count == 1 }
            #expect(await seen.exchanges.map(\.fault) == [nil])
            #expect(proxy.stats.current.faults == 3 && proxy.stats.current.exchanges == 1)
            await stop(stub, proxy, transport)
        }

        @Test func hangAnswersNothingUntilItsBoundOrTheAppGivesUp() async throws {
            let events = Events()
            let (stub, proxy, transport, _) = try await start(events: events, faults: [
                try ProxyFault.parse("hang,seconds=1,path=/api/v1/balance,count=1"), try ProxyFault.parse("hang,path=/api/v1/audio_packs"),
            ])
            let clock = ContinuousClock.now
            let app = try RawClient(port: proxy.address.port)
            try app.send(get(stub, "/api/v1/balance?user_id=qa-alice"))
            let end = app.readToEnd()
            #expect(end.bytes.isEmpty && end.ending == .closed && ContinuousClock.now - clock >= .milliseconds(900))
            let giver = try RawClient(port: proxy.address.port)
            try giver.send(get(stub, "/api/v1/audio_packs"))
            // The proxy has taken the request once it spent the fault on it; a hang tells nothing until the app leaves.
            // (The first hang's event is told as its connection closes, on the proxy's thread: waited for too.)
            try await waitFor { proxy.stats.current.faults == 2 && events.injected.count >= 1 }
            #expect(events.injected.count == 1)
            giver.hangUp()
            try await waitFor { events.injected.count == 2 }
            #expect(events.injected.allSatisfy { $0.fault == InjectedFault.hang.note && $0.response == nil })
            #expect(await stub.recorder.requests(to: "/api/v1/balance").isEmpty)
            await stop(stub, proxy, transport)
        }

        @Test func resetClosesTheAppsConnectionWithARST() async throws {
            let (stub, proxy, transport, _) = try await start(faults: [try ProxyFault.parse("reset,path=/api/v1/balance")])
            let app = try RawClient(port: proxy.address.port)
            try app.send(get(stub, "/api/v1/balance?user_id=qa-alice"))
            let end = app.readToEnd()
            #expect(end.bytes.isEmpty && end.ending == .reset)
            #expect(await stub.recorder.requests(to: "/api/v1/balance").isEmpty)
            await stop(stub, proxy, transport)
        }

        @Test func offlineRefusesRequestsAndTunnelsButNotTheProxysOwnAddress() async throws {
            let events = Events()
            let (stub, proxy, transport, seen) = try await start(events: events)
            let control = try RawClient(port: proxy.address.port)
            #expect(try control.exchange(post("/_proxy/faults", #"{"kind":"offline"}"#)).status == 201)
            let app = try RawClient(port: proxy.address.port)
            try app.send(get(stub, "/api/v1/balance?user_id=qa-alice"))
            let refused = app.readToEnd()
            #expect(refused.bytes.isEmpty && refused.ending == .closed)
            let tunnel = try RawClient(port: proxy.address.port)
            try tunnel.send("CONNECT 127.0.0.1:\(stub.port) HTTP/1.1\r\nHost: 127.0.0.1:\(stub.port)\r\n\r\n")
            let closed = tunnel.readToEnd()
            #expect(closed.bytes.isEmpty && closed.ending == .closed)
            #expect(try control.exchange("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").status == 200)
            #expect(try control.exchange("DELETE /_proxy/faults HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").body == "{\"cleared\":1}\n")
            #expect(try RawClient(port: proxy.address.port).exchange(get(stub, "/api/v1/balance?user_id=qa-alice")).status == 200)
            #expect(await stub.recorder.requests(to: "/api/v1/balance").count == 1)
            #expect(events.injected.map(\.fault) == [InjectedFault.offline.note] && proxy.stats.current.faults == 2)
            try await waitFor { await seen.exchanges.count == 1 }
            await stop(stub, proxy, transport)
        }

        @Test func truncateSendsTheWholeLengthButOnlyKeepBytes() async throws {
            let (stub, proxy, transport, seen) = try await start(faults: [try ProxyFault.parse("truncate,keep=10,path=/api/v1/audio_packs")])
            let app = try RawClient(port: proxy.address.port)
            try app.send(get(stub, "/api/v1/audio_packs"))
            let head = try app.readHead()
            let length = try #require(Int(head.header("Content-Length") ?? ""))
            let rest = app.readToEnd()
            #expect(head.status == 200 && length > 10 && rest.bytes.count == 10 && rest.ending == .closed)
            try await waitFor { await seen.exchanges.count == 1 }
            let recorded = try #require(await seen.exchanges.first)
            #expect(recorded.fault == InjectedFault.truncate.note && recorded.response?.body.count == length)
            await stop(stub, proxy, transport)
        }

        @Test func loseAnswerForwardsRecordsTheServersAnswerAndClosesWithoutIt() async throws {
            let events = Events()
            let (stub, proxy, transport, seen) = try await start(events: events, faults: [
                try ProxyFault.parse("lose_answer,method=POST,path=/api/v2/purchase_cheer,count=1"),
            ])
            let before = try RawClient(port: proxy.address.port).exchange(get(stub, "/api/v1/balance?user_id=qa-alice"))
            let purchase = #"{"identifier":"com.reiterate.cheer.200","transaction_id":\#(Int.random(in: 1_000_000...9_000_000))}"#
            let app = try RawClient(port: proxy.address.port)
            try app.send(post("/api/v2/purchase_cheer?user_id=qa-alice", purchase, stub: stub))
            let end = app.readToEnd()
            #expect(end.bytes.isEmpty && end.ending == .closed)
            try await waitFor { await seen.exchanges.count == 2 }
            let lost = try #require(await seen.exchanges.last)
            #expect(lost.request.key.path == "/api/v2/purchase_cheer" && lost.response?.status == 200 && lost.fault == InjectedFault.loseAnswer.note)
            #expect(await stub.recorder.requests(to: "/api/v2/purchase_cheer").count == 1)
            // The server credited the purchase the app never heard about.
            let after = try RawClient(port: proxy.address.port).exchange(get(stub, "/api/v1/balance?user_id=qa-alice"))
            #expect(try balance(after) == (try balance(before)) + 200)
            #expect(events.injected.isEmpty)
            await stop(stub, proxy, transport)
        }

        @Test func everyForwardedRequestIsToldAsSendingBeforeItsExchange() async throws {
            let events = Events()
            let (stub, proxy, transport, _) = try await start(events: events)
            #expect(try RawClient(port: proxy.address.port).exchange(get(stub, "/api/v1/audio_packs")).status == 200)
            try await waitFor { events.list.withLock { $0.contains { if case .exchange = $0 { true } else { false } } } }
            let order = events.list.withLock { list in
                list.compactMap { event -> (String, Int, Bool)? in
                    switch event {
                    case .sending(let e): ("sending", e.serial, e.response == nil)
                    case .exchange(let e): ("exchange", e.serial, e.response == nil)
                    default: nil
                    }
                }
            }
            #expect(order.map(\.0) == ["sending", "exchange"] && order[0].1 == order[1].1 && order[0].2 && !order[1].2)
            await stop(stub, proxy, transport)
        }

        // MARK: The control endpoint

        /// A web page on this machine can send a POST with no preflight only without an Origin-free JSON
        /// label: one naming an Origin, or a body not labelled application/json, is refused.
        @Test func aFaultPostedAsAWebPageWouldIsRefused() async throws {
            let (stub, proxy, transport, _) = try await start()
            let body = #"{"kind":"offline"}"#
            let fromPage = "POST /_proxy/faults HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://evil.example\r\nContent-Type: application/json\r\n"
                + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
            let asText = "POST /_proxy/faults HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
            for request in [fromPage, asText] {
                let answer = try RawClient(port: proxy.address.port).exchange(request)
                #expect(answer.status == 403, "\(answer.body)")
            }
            let deleteFromPage = try RawClient(port: proxy.address.port).exchange("DELETE /_proxy/faults HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: null\r\n\r\n")
            #expect(deleteFromPage.status == 403)
            #expect(proxy.faults.list().isEmpty)
            #expect(try RawClient(port: proxy.address.port).exchange(post("/_proxy/faults", body)).status == 201)
            await stop(stub, proxy, transport)
        }

        @Test func theControlEndpointAddsListsAndRemovesFaults() async throws {
            let (stub, proxy, transport, seen) = try await start()
            let control = try RawClient(port: proxy.address.port)
            let added = try control.exchange(post("/_proxy/faults", #"{"kind":"lose_answer","path":"/api/v2/purchase_cheer","method":"POST","count":1}"#))
            #expect(added.status == 201)
            #expect(added.body == #"{"faults":[{"id":1,"remaining":1,"hits":0,"kind":"lose_answer","path":"/api/v2/purchase_cheer","method":"POST","count":1}]}"# + "\n")
            let two = try control.exchange(post("/_proxy/faults", #"[{"kind":"latency","ms":5},{"kind":"status","status":503}]"#))
            #expect(two.status == 201 && proxy.faults.list().map(\.id) == [1, 2, 3])
            let listed = try control.exchange("GET /_proxy/faults HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            #expect(listed.status == 200 && listed.body.contains(#"{"id":2,"hits":0,"kind":"latency","path":"/api/*","ms":5,"jitter":0}"#))
            let bad = try control.exchange(post("/_proxy/faults", #"{"kind":"status","colour":"red"}"#))
            #expect(bad.status == 400 && bad.body.contains("unknown fault key 'colour'") && bad.body.contains(#""code":"invalid_fault""#))
            #expect(try control.exchange("DELETE /_proxy/faults/2 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").body == "{\"removed\":2}\n")
            #expect(try control.exchange("DELETE /_proxy/faults/2 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").status == 404)
            #expect(try control.exchange("PUT /_proxy/faults HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n").status == 405)
            #expect(try control.exchange("DELETE /_proxy/faults HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").body == "{\"cleared\":2}\n")
            #expect(proxy.faults.list().isEmpty)
            // Answered by the proxy itself: nothing reached the server or the pipeline. The moment has passed
            // once a request for the server, sent after them, has been through both.
            #expect(try RawClient(port: proxy.address.port).exchange(get(stub, "/api/v1/audio_packs")).status == 200)
            try await waitFor { await seen.exchanges.count == 1 }
            #expect(await stub.recorder.requests(to: "/api/v1/audio_packs").count == 1)
            #expect(await stub.recorder.requests(to: "/_proxy/faults").isEmpty)
            #expect(await seen.exchanges.map(\.request.key.path) == ["/api/v1/audio_packs"])
            await stop(stub, proxy, transport)
        }

        // MARK: Helpers

        func get(_ stub: RunningStub, _ target: String) -> String {
            "GET \(stub.url)\(target) HTTP/1.1\r\nHost: 127.0.0.1:\(stub.port)\r\nAuthorization: Bearer dev-token\r\n\r\n"
        }

        /// A POST of a JSON body: to the proxy itself, or through it to the stand-in.
        func post(_ target: String, _ body: String, stub: RunningStub? = nil) -> String {
            let host = stub.map { "127.0.0.1:\($0.port)" } ?? "127.0.0.1"
            return "POST \(stub?.url ?? "")\(target) HTTP/1.1\r\nHost: \(host)\r\nAuthorization: Bearer dev-token\r\n"
                + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
        }

        func balance(_ answer: RawClient.Answer) throws -> Int {
            guard case let .object(o)? = JSONValue.parse(Array(answer.body.utf8)), case let .int(n)? = o["balance"] else {
                throw RawClient.Failure(description: "no balance in \(answer.body)")
            }
            return n
        }
    }
}
