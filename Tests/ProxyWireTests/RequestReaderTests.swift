import ProxyWire
import Testing

@Suite struct RequestReaderTests {
    static let get = wire("GET /balance?user=qa-alice HTTP/1.1", "Host: api.shop.test", "Accept: */*", "", "")
    static let post = wire("POST http://api.shop.test:8080/spend HTTP/1.1", "Host: api.shop.test:8080", "Content-Length: 11", "", "") + #"{"amount":7"#
    static let chunked = wire("PUT /p HTTP/1.1", "Host: h", "Transfer-Encoding: chunked", "", "5;name=\"v\"", "hello", "0a", " world ...", "0",
                              "X-Sum: 1", "", "")
    static let connect = wire("CONNECT api.shop.test:443 HTTP/1.1", "Host: api.shop.test:443", "", "") + "\u{16}\u{03}\u{01}hello"
    static let old = wire("GET / HTTP/1.0", "Connection: keep-alive", "", "")

    @Test func aBodilessRequestGivesItsHeadThenItselfFromConsecutiveCalls() throws {
        var reader = RequestReader()
        reader.append(Array(Self.get.utf8))
        let head = try #require(try reader.next())
        guard case .head(let h) = head else { Issue.record("expected the head first"); return }
        #expect(h.method == "GET" && h.target == "/balance?user=qa-alice" && h.minorVersion == 1)
        #expect(h.headers == [HeaderField(name: "Host", value: "api.shop.test"), HeaderField(name: "Accept", value: "*/*")])
        #expect(h.framing == .none && h.keepAlive && !h.expectsContinue && h.targetForm == .origin)
        #expect(try reader.next() == .request(h, body: []))
        #expect(try reader.next() == nil)
        #expect(reader.buffered == 0)
    }

    @Test func theHeadComesBeforeTheBodyHasArrived() throws {
        var reader = RequestReader()
        let bytes = Array(Self.post.utf8)
        reader.append(bytes.dropLast(11))
        guard case .head(let head) = try reader.next() else { Issue.record("expected the head"); return }
        #expect(head.framing == .length(11) && head.targetForm == .absolute)
        #expect(try reader.next() == nil)
        #expect(reader.buffered == 0)
        reader.append(bytes.suffix(11).dropLast())
        #expect(try reader.next() == nil)
        #expect(reader.buffered == 10)
        reader.append(bytes.suffix(1))
        #expect(try reader.next() == .request(head, body: Array(#"{"amount":7"#.utf8)))
    }

    @Test func aChunkedBodyIsDechunkedAndItsTrailersDropped() throws {
        let request = try #require(onlyRequest(Self.chunked))
        #expect(request.head.framing == .chunked)
        #expect(String(decoding: request.body, as: UTF8.self) == "hello world ...")
        #expect(request.head.value("x-sum") == nil)
        let lowercase = wire("PUT /p HTTP/1.1", "Host: h", "transfer-encoding: Chunked", "", "3 ;x", "abc", "0", "", "")
        #expect(onlyRequest(lowercase)?.body == Array("abc".utf8))
    }

    @Test func pipelinedRequestsComeOutInOrder() {
        let outcome = feed(Self.get + Self.post + Self.chunked + Self.get)
        #expect(outcome.refusal == nil)
        #expect(outcome.events.count == 8)
        #expect(outcome.requests.map(\.head.method) == ["GET", "POST", "PUT", "GET"])
        #expect(outcome.requests.map(\.body.count) == [0, 11, 15, 0])
        #expect(outcome.buffered == 0)
    }

    @Test func feedingByteByByteOrInPiecesMakesTheSameEventsAsAllAtOnce() {
        let inputs = [Self.get, Self.post, Self.chunked, Self.connect, Self.old, Self.get + Self.chunked + Self.post,
                      "\r\n" + Self.get + "\r\n" + Self.get, Self.chunked.replacing("0a", with: "0x0a"),
                      wire("GET / HTTP/1.1", "Host: a", "Content-Length: 1", "Content-Length: 2", "", "")]
        for text in inputs {
            let bytes = Array(text.utf8)
            let whole = feed(bytes)
            #expect(!whole.events.isEmpty || whole.refusal != nil)
            #expect(feed(bytes, cuts: Array(0..<bytes.count)) == whole, "byte by byte: \(text.debugDescription)")
            for cut in [1, 2, 17, bytes.count / 2, bytes.count - 3] {
                #expect(feed(bytes, cuts: [cut, cut + 5]) == whole, "cut at \(cut): \(text.debugDescription)")
            }
        }
    }

    @Test func connectHandsOverTheBytesBeyondItsHeadOnce() throws {
        var reader = RequestReader()
        reader.append(Array(Self.connect.utf8))
        guard case .head(let head) = try reader.next() else { Issue.record("expected the head"); return }
        #expect(head.targetForm == .authority && head.target == "api.shop.test:443")
        #expect(try reader.next() == .request(head, body: []))
        #expect(try reader.next() == nil)
        #expect(reader.buffered == 8)
        #expect(reader.takeRemaining() == Array("\u{16}\u{03}\u{01}hello".utf8))
        #expect(reader.takeRemaining().isEmpty && reader.buffered == 0)
        reader.append([1, 2, 3])
        #expect(try reader.next() == nil)
        #expect(reader.takeRemaining() == [1, 2, 3])
    }

    @Test func takeRemainingGivesNothingOutsideATunnel() throws {
        var reader = RequestReader()
        reader.append(Array((Self.get + "GET /next").utf8))
        while try reader.next() != nil {}
        #expect(reader.takeRemaining().isEmpty && reader.buffered == 9)
    }

    @Test func expectContinueIsFlaggedWithoutRegardToCase() throws {
        let text = wire("POST /spend HTTP/1.1", "Host: h", "Expect: 100-Continue", "Content-Length: 2", "", "") + "{}"
        #expect(onlyRequest(text)?.head.expectsContinue == true)
        let old = wire("POST /spend HTTP/1.0", "Expect: 100-continue", "Content-Length: 2", "", "") + "{}"
        #expect(onlyRequest(old)?.head.expectsContinue == false)
    }

    @Test func keepAliveFollowsTheVersionAndConnection() {
        #expect(onlyRequest(Self.get)?.head.keepAlive == true)
        #expect(onlyRequest(wire("GET / HTTP/1.1", "Host: a", "Connection: keep-alive, Close", "", ""))?.head.keepAlive == false)
        #expect(onlyRequest(wire("GET / HTTP/1.0", "", ""))?.head.keepAlive == false)
        #expect(onlyRequest(Self.old)?.head.keepAlive == true)
        #expect(onlyRequest(Self.old)?.head.minorVersion == 0)
    }

    @Test func nothingIsReadAfterARequestThatClosesTheConnection() {
        let closing = wire("GET / HTTP/1.1", "Host: a", "Connection: close", "", "")
        let outcome = feed(closing + Self.get + "garbage\r\n\r\n")
        #expect(outcome.refusal == nil && outcome.requests.count == 1 && outcome.buffered == 0)
    }

    @Test func leadingEmptyLinesAreSkipped() {
        #expect(onlyRequest("\r\n\r\n" + Self.get)?.head.target == "/balance?user=qa-alice")
    }

    @Test func headerValuesLoseSurroundingSpaceAndKeepTheirNamesAsSent() throws {
        let request = try #require(onlyRequest(wire("GET / HTTP/1.1", "hOsT: a", "X-Note:\t é t \t", "X-Empty:", "x-note: 2", "", "")))
        #expect(request.head.headers.map(\.name) == ["hOsT", "X-Note", "X-Empty", "x-note"])
        #expect(request.head.values("X-NOTE") == ["é t", "2"] && request.head.value("host") == "a" && request.head.value("X-Empty") == "")
        #expect(request.head.value("Missing") == nil && request.head.values("Missing").isEmpty)
    }

    @Test func targetFormsAreTold() {
        #expect(onlyRequest(wire("OPTIONS * HTTP/1.1", "Host: a", "", ""))?.head.targetForm == .asterisk)
        #expect(onlyRequest(wire("CONNECT [::1]:8443 HTTP/1.1", "Host: [::1]:8443", "", ""))?.head.targetForm == .authority)
        #expect(onlyRequest(wire("GET https://a.test/x?y HTTP/1.1", "Host: a.test", "", ""))?.head.targetForm == .absolute)
    }

    @Test func contentLengthsThatAgreeAreOne() {
        #expect(onlyRequest(wire("POST / HTTP/1.1", "Host: a", "Content-Length: 3, 3", "Content-Length: 003", "", "") + "abc")?.body
            == Array("abc".utf8))
        #expect(onlyRequest(wire("POST / HTTP/1.1", "Host: a", "Content-Length: 0", "", ""))?.head.framing == .length(0))
    }
}
