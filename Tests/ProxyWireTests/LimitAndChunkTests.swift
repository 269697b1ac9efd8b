import ProxyWire
import Testing

@Suite struct LimitAndChunkTests {
    static let small = WireLimits(maxHeadBytes: 256, maxHeaderCount: 4, maxBodyBytes: 64, maxChunkLineBytes: 32)

    func chunked(_ body: String...) -> String {
        wire("POST / HTTP/1.1", "Host: a", "Transfer-Encoding: chunked", "", "") + body.joined(separator: "\r\n")
    }

    @Test func chunkSizesAreBareHexDigits() {
        #expect(onlyRequest(chunked("0005", "abcde", "0", "", ""))?.body == Array("abcde".utf8))
        #expect(onlyRequest(chunked("A", "0123456789", "0", "", ""))?.body.count == 10)
        for size in ["+5", "-5", "0x5", " 5", "5 ", "5\t", "", "g", "5 x", "5;a\u{01}", "5;a\rb"] {
            #expect(refusal(chunked(size, "abcde", "0", "", "")) == .badChunk, "\(size.debugDescription)")
        }
    }

    @Test func extensionsAreIgnoredButBounded() {
        #expect(onlyRequest(chunked("5 ; a=1;b=\"x y\"", "abcde", "0;last", "", ""))?.body == Array("abcde".utf8))
        let long = "5;" + String(repeating: "e", count: 40)
        #expect(refusal(chunked(long, "abcde", "0", "", ""), limits: Self.small) == .badChunk)
        #expect(feed(chunked("5;" + String(repeating: "e", count: 40)), limits: Self.small).refusal == .badChunk)
        #expect(onlyRequest(chunked(long, "abcde", "0", "", ""))?.body.count == 5)
    }

    @Test func aChunkSizeTooLargeForAnIntIsRefused() {
        #expect(refusal(chunked("10000000000000000", "x")) == .badChunk)
        #expect(refusal(chunked("7fffffffffffffff", "x")) == .bodyTooLarge)
    }

    @Test func chunkDataEndsInCRLFExactly() {
        #expect(refusal(chunked("5", "abcdefg", "0", "", "")) == .badChunk)
        #expect(refusal(chunked("5", "abcde\n0", "", "")) == .badChunk)
        #expect(refusal(chunked("5\nabcde", "0", "", "")) == .badChunk)
        #expect(refusal(chunked("5", "abcde", "0\n\r\n")) == .badChunk)
    }

    @Test func trailersAreReadCheckedAndDropped() {
        let request = onlyRequest(chunked("1", "x", "0", "Checksum: 1", "Other: 2", "", ""))
        #expect(request?.body == Array("x".utf8) && request?.head.value("Checksum") == nil)
        #expect(refusal(chunked("1", "x", "0", "Bad line", "", "")) == .malformedHeader)
        #expect(refusal(chunked("1", "x", "0", "A: 1", " folded", "", "")) == .obsoleteLineFolding)
        #expect(refusal(chunked("1", "x", "0", "A: 1\nB: 2", "", "")) == .badChunk)
        let many = Array(repeating: "T: " + String(repeating: "t", count: 20), count: 20)
        #expect(refusal(chunked(["1", "x", "0"] + many + ["", ""]), limits: Self.small) == .trailersTooLarge)
    }

    func chunked(_ lines: [String]) -> String {
        wire("POST / HTTP/1.1", "Host: a", "Transfer-Encoding: chunked", "", "") + lines.joined(separator: "\r\n")
    }

    @Test func aChunkedBodyOverTheLimitIsRefusedAtTheChunkThatCrossesIt() {
        let text = chunked("20", String(repeating: "a", count: 32), "21", "")
        #expect(feed(text, limits: Self.small).refusal == .bodyTooLarge)
        #expect(feed(chunked("20", String(repeating: "a", count: 32), "20", String(repeating: "b", count: 32), "0", "", ""),
                     limits: Self.small).requests.first?.body.count == 64)
    }

    @Test func aContentLengthOverTheLimitIsRefusedBeforeTheBody() {
        let text = wire("POST / HTTP/1.1", "Host: a", "Content-Length: 65", "", "")
        #expect(feed(text, limits: Self.small).refusal == .bodyTooLarge)
        #expect(feed(wire("POST / HTTP/1.1", "Host: a", "Content-Length: 64", "", ""), limits: Self.small).events.count == 1)
    }

    @Test func aHeadOverTheLimitIsRefusedBeforeItEnds() throws {
        var reader = RequestReader(limits: Self.small)
        reader.append(Array(("GET /" + String(repeating: "a", count: 250)).utf8))
        #expect(try reader.next() == nil)
        reader.append(Array("bbbbbb".utf8))
        #expect(throws: WireRefusal.headTooLarge) { try reader.next() }
        let exact = wire("GET /" + String(repeating: "a", count: 256 - 27) + " HTTP/1.1", "Host: a", "", "")
        #expect(exact.utf8.count == 256 && refusal(exact, limits: Self.small) == nil)
        #expect(refusal("\r\n" + exact, limits: Self.small) == .headTooLarge)
    }

    @Test func emptyLinesBeforeARequestCountTowardsItsHead() {
        #expect(refusal(String(repeating: "\r\n", count: 200), limits: Self.small) == .headTooLarge)
    }

    @Test func tooManyHeaderFieldsAreRefused() {
        let four = ["Host: a", "A: 1", "B: 2", "C: 3"]
        #expect(refusal(wire(["GET / HTTP/1.1"] + four + ["", ""]), limits: Self.small) == nil)
        var reader = RequestReader(limits: Self.small)
        reader.append(Array(wire(["GET / HTTP/1.1"] + four + ["D: 4", ""]).utf8))
        #expect(throws: WireRefusal.tooManyHeaders) { try reader.next() }
    }

    @Test func bufferedCountsWhatIsHeld() throws {
        var reader = RequestReader()
        let text = chunked("5", "abcde", "3", "fg")
        reader.append(Array(text.utf8))
        #expect(reader.buffered == text.utf8.count)
        _ = try reader.next()
        #expect(try reader.next() == nil)
        #expect(reader.buffered == 7)  // "abcde" de-chunked, "fg" as received
    }

    @Test func manyPipelinedRequestsInSmallPiecesStayCheap() {
        let one = Array(wire("POST /spend HTTP/1.1", "Host: a", "Content-Length: 3", "", "abc").utf8)
        let bytes = Array([[UInt8]](repeating: one, count: 2000).joined())
        let outcome = feed(bytes, cuts: Array(stride(from: 0, to: bytes.count, by: 7)))
        #expect(outcome.refusal == nil && outcome.requests.count == 2000 && outcome.buffered == 0)
    }

    @Test func aLargeBodyInPiecesIsReadOnce() {
        let body = [UInt8](repeating: 0x61, count: 4 << 20)
        let head = Array(wire("POST / HTTP/1.1", "Host: a", "Transfer-Encoding: chunked", "", "").utf8)
        var bytes = head
        for piece in stride(from: 0, to: body.count, by: 100_000) {
            let n = min(100_000, body.count - piece)
            bytes += Array((String(n, radix: 16) + "\r\n").utf8) + body[piece..<(piece + n)] + [13, 10]
        }
        bytes += Array("0\r\n\r\n".utf8)
        let outcome = feed(bytes, cuts: Array(stride(from: 0, to: bytes.count, by: 1500)))
        #expect(outcome.requests.first?.body == body)
    }
}
