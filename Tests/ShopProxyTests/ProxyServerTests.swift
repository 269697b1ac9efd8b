import Foundation
import NIOCore
import ProxyCA
import ShopAPI
import StubCore
import StubServer
import Synchronization
import Testing
@testable import ShopProxy

/// The proxy in this process between a raw socket (the app) and the stand-in on 127.0.0.1 (plain HTTP
/// here; TLS interception is tested with curl, openssl and Python in Tests/contract/test_proxy.py).
@Suite(.serialized) struct ProxyServerTests: ProxyTesting {
    @Test func aPlainRequestForTheShopIsForwardedAndRecordedAsTheApps() async throws {
        let (stub, proxy, transport, seen) = try await start()
        let app = try RawClient(port: proxy.address.port)
        let answer = try app.exchange("GET \(stub.url)/api/v1/balance?user_id=qa-alice HTTP/1.1\r\nHost: 127.0.0.1:\(stub.port)\r\nAuthorization: Bearer dev-token\r\n\r\n")
        #expect(answer.status == 200)
        #expect(answer.body.contains("\"balance\""))
        // The same connection takes a second request (keep-alive).
        let second = try app.exchange("GET \(stub.url)/api/v1/audio_packs HTTP/1.1\r\nHost: 127.0.0.1:\(stub.port)\r\nAuthorization: Bearer dev-token\r\n\r\n")
        #expect(second.status == 200)
        try await waitFor { await seen.exchanges.count == 2 }
        let first = try #require(await seen.exchanges.first)
        #expect(first.source == .app)
        #expect(first.request.key.description == "GET /api/v1/balance?user_id=qa-alice")
        // Its operation decided once, from the contract, when the proxy made the exchange (issue 36).
        #expect(first.request.operation == .getBalance && first.request.match == .operation(.getBalance))
        #expect(await seen.exchanges.last?.request.operation == .listAudioPacks)
        #expect(first.response?.status == 200 && first.requestID != nil)
        #expect(proxy.stats.current.exchanges == 2)
        await stop(stub, proxy, transport)
    }

    /// A further host (`proxy_hosts`) keeps its own origin on the exchange, so a HAR names its real URL (it
    /// named the base URL's host before); the base URL's own requests have none.
    @Test func aRequestToAFurtherHostKeepsItsOrigin() async throws {
        let (stub, proxy, transport, seen) = try await start(extraHosts: { [HostPort(host: "localhost", port: $0)] })
        let app = try RawClient(port: proxy.address.port)
        _ = try app.exchange("GET \(stub.url)/api/v1/audio_packs HTTP/1.1\r\nHost: 127.0.0.1:\(stub.port)\r\nAuthorization: Bearer dev-token\r\n\r\n")
        _ = try app.exchange("GET http://localhost:\(stub.port)/api/v1/audio_packs HTTP/1.1\r\nHost: localhost:\(stub.port)\r\nAuthorization: Bearer dev-token\r\n\r\n")
        try await waitFor { await seen.exchanges.count == 2 }
        let origins = await seen.exchanges.map(\.request.origin)
        #expect(origins == [nil, "http://localhost:\(stub.port)"], "\(origins)")
        await stop(stub, proxy, transport)
    }

    @Test func anAmbiguousRequestIsRefusedAndNeverReachesTheServer() async throws {
        let events = Events()
        let (stub, proxy, transport, _) = try await start(events: events)
        let app = try RawClient(port: proxy.address.port)
        let body = "{\"amount\":1}"
        let answer = try app.exchange("POST \(stub.url)/api/v1/spend_cheer HTTP/1.1\r\nHost: 127.0.0.1:\(stub.port)\r\nContent-Length: \(body.utf8.count)\r\n"
                                      + "Transfer-Encoding: chunked\r\n\r\n\(body)")
        #expect(answer.status == 400)
        #expect(answer.header("X-Reiterate-Proxy") == "refused")
        // The moment has passed once a plain request to the same path, sent after the refusal, has
        // reached the server: then it is the only one there.
        let marker = try RawClient(port: proxy.address.port).exchange(
            "POST \(stub.url)/api/v1/spend_cheer HTTP/1.1\r\nHost: 127.0.0.1:\(stub.port)\r\nX-Marker: after\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
        #expect(marker.header("X-Reiterate-Proxy") == nil)
        try await waitFor { await !stub.recorder.requests(to: "/api/v1/spend_cheer").isEmpty }
        #expect(await stub.recorder.requests(to: "/api/v1/spend_cheer").map { $0.header("X-Marker") } == ["after"])
        #expect(events.refusals.count == 1 && events.refusals.first?.status == 400)
        await stop(stub, proxy, transport)
    }

    @Test func anotherHostIsNotRelayed() async throws {
        let (stub, proxy, transport, seen) = try await start()
        let app = try RawClient(port: proxy.address.port)
        let answer = try app.exchange("GET http://example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n")
        #expect(answer.status == 403)
        #expect(await seen.exchanges.isEmpty)
        await stop(stub, proxy, transport)
    }

    @Test func aHostHeaderThatDisagreesWithTheURLIsRefused() async throws {
        let (stub, proxy, transport, _) = try await start()
        let app = try RawClient(port: proxy.address.port)
        let answer = try app.exchange("GET \(stub.url)/api/v1/audio_packs HTTP/1.1\r\nHost: example.com\r\n\r\n")
        #expect(answer.status == 400)
        await stop(stub, proxy, transport)
    }

    @Test func withAPasswordARequestWithoutItGets407AndIsCounted() async throws {
        let (stub, proxy, transport, _) = try await start(password: "s3cret")
        let request = "GET \(stub.url)/api/v1/audio_packs HTTP/1.1\r\nHost: 127.0.0.1:\(stub.port)\r\nAuthorization: Bearer dev-token\r\n"
        #expect(try RawClient(port: proxy.address.port).exchange(request + "\r\n").status == 407)
        let wrong = Data("qa:wrong".utf8).base64EncodedString()
        #expect(try RawClient(port: proxy.address.port).exchange(request + "Proxy-Authorization: Basic \(wrong)\r\n\r\n").status == 407)
        let right = Data("qa:s3cret".utf8).base64EncodedString()
        #expect(try RawClient(port: proxy.address.port).exchange(request + "Proxy-Authorization: Basic \(right)\r\n\r\n").status == 200)
        #expect(proxy.stats.current.authFailures == 2)
        // The password reaches neither the server nor the exchange kept.
        let kept = await stub.recorder.requests(to: "/api/v1/audio_packs")
        #expect(kept.count == 1 && kept.allSatisfy { $0.header("Proxy-Authorization") == nil })
        await stop(stub, proxy, transport)
    }

    @Test func beyondThisMachineTheProxyDoesNotStartWithoutAPassword() throws {
        let configuration = ProxyConfiguration(listen: HostPort(host: "0.0.0.0", port: 0), baseURL: try #require(URL(string: "http://127.0.0.1:1")))
        #expect(configuration.refusal?.contains("REITERATE_PROXY_PASSWORD") == true)
        var withPassword = configuration
        withPassword.password = "x"
        #expect(withPassword.refusal == nil)
    }

    @Test func anUpstreamThatResetsGivesTheAppACleanBadGateway() async throws {
        let (stub, proxy, transport, seen) = try await start()
        try await stub.addFault("reset,path=/api/v1/audio_packs,count=1")
        let app = try RawClient(port: proxy.address.port)
        let answer = try app.exchange("GET \(stub.url)/api/v1/audio_packs HTTP/1.1\r\nHost: 127.0.0.1:\(stub.port)\r\n\r\n")
        #expect(answer.status == 502)
        #expect(answer.header("X-Reiterate-Proxy") == "upstream-failed")
        try await waitFor { await seen.exchanges.count == 1 }
        #expect(await seen.exchanges.first?.failure != nil)
        await stop(stub, proxy, transport)
    }

    @Test func expectContinueGetsAnInterimAnswerThenTheServers() async throws {
        let (stub, proxy, transport, _) = try await start()
        let app = try RawClient(port: proxy.address.port)
        let body = "{\"amount\":1,\"product_identifier\":\"x\",\"user_id\":\"qa-alice\"}"
        try app.send("POST \(stub.url)/api/v1/spend_cheer HTTP/1.1\r\nHost: 127.0.0.1:\(stub.port)\r\nAuthorization: Bearer dev-token\r\n"
                     + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nExpect: 100-continue\r\n\r\n")
        let interim = try app.readHead()
        #expect(interim.status == 100)
        try app.send(body)
        let answer = try app.readAnswer()
        #expect((400..<500).contains(answer.status) || answer.status == 200)
        #expect(await stub.recorder.requests(to: "/api/v1/spend_cheer").count == 1)
        await stop(stub, proxy, transport)
    }

    @Test func aSlowHeadIsCutOff() async throws {
        let (stub, proxy, transport, _) = try await start(headTimeout: .milliseconds(300))
        let app = try RawClient(port: proxy.address.port)
        try app.send("GET \(stub.url)/api/v1/audio_packs HTTP/1.1\r\nHost: 127.0.0.1")
        let answer = try app.readAnswer()
        #expect(answer.status == 408)
        await stop(stub, proxy, transport)
    }

    @Test func aBodyThatTricklesIsCutOff() async throws {
        let (stub, proxy, transport, _) = try await start(bodyTimeout: .milliseconds(300))
        let app = try RawClient(port: proxy.address.port)
        try app.send("POST \(stub.url)/api/v1/spend_cheer HTTP/1.1\r\nHost: 127.0.0.1:\(stub.port)\r\nContent-Length: 100\r\n\r\n{")
        let answer = try app.readAnswer()
        #expect(answer.status == 408)
        #expect(await stub.recorder.requests(to: "/api/v1/spend_cheer").isEmpty)
        await stop(stub, proxy, transport)
    }

    @Test func aRequestForAnotherHostIsRefusedBeforeItsBodyIsAskedFor() async throws {
        let (stub, proxy, transport, _) = try await start()
        let app = try RawClient(port: proxy.address.port)
        try app.send("POST http://example.com/upload HTTP/1.1\r\nHost: example.com\r\nContent-Length: 16000000\r\nExpect: 100-continue\r\n\r\n")
        let answer = try app.readHead()
        #expect(answer.status == 403)  // not 100 Continue: no upload is invited that would then be refused
        await stop(stub, proxy, transport)
    }

    @Test func anHTTP10ClientGetsTheWholeAnswerThenTheClose() async throws {
        let (stub, proxy, transport, _) = try await start()
        let app = try RawClient(port: proxy.address.port)
        let answer = try app.exchange("GET \(stub.url)/api/v1/audio_packs HTTP/1.0\r\nHost: 127.0.0.1:\(stub.port)\r\nAuthorization: Bearer dev-token\r\n"
                                      + "Connection: keep-alive\r\n\r\n")
        #expect(answer.status == 200 && answer.header("Connection") == "close")
        #expect(answer.body.utf8.count == Int(answer.header("Content-Length") ?? "") && answer.body.hasSuffix("}"))
        await stop(stub, proxy, transport)
    }

    @Test func beyondThisMachineATunnelMayNotReachIt() {
        let proxy = try? SocketAddress(ipAddress: "192.0.2.2", port: 8877)
        for forbidden in ["127.0.0.1", "127.0.0.2", "0.0.0.0", "169.254.169.254", "::1", "::", "fe80::1", "192.0.2.2"] {
            let address = try? SocketAddress(ipAddress: forbidden, port: 443)
            #expect(address.map { TunnelPolicy.isForbidden($0, proxy: proxy) } == true, "\(forbidden)")
        }
        for allowed in ["93.184.216.34", "10.0.0.7", "2606:4700::1111"] {
            let address = try? SocketAddress(ipAddress: allowed, port: 443)
            #expect(address.map { TunnelPolicy.isForbidden($0, proxy: proxy) } == false, "\(allowed)")
        }
        #expect(HostPort(host: "127.0.0.1", port: 1).isLoopback && !HostPort(host: "127.a.b.c", port: 1).isLoopback)
        #expect(!HostPort(host: "127.0.0.1.evil.example", port: 1).isLoopback)
    }

    @Test func theProxyServesItsOwnSetupPageAndCA() async throws {
        let (stub, proxy, transport, _) = try await start()
        let page = try RawClient(port: proxy.address.port).exchange("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(page.status == 200 && page.body.contains("/ca.mobileconfig"))
        let pem = try RawClient(port: proxy.address.port).exchange("GET /ca.pem HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(pem.body.hasPrefix("-----BEGIN CERTIFICATE-----") && !pem.body.contains("PRIVATE KEY"))
        await stop(stub, proxy, transport)
    }
}
