import ProxyWire
import Testing

/// Each rule of the reader, with a request that breaks it (and, beside it, the nearest one that passes).
@Suite struct RefusalTests {
    /// A head with `Host: a` and these header lines.
    func head(_ lines: String..., line: String = "GET / HTTP/1.1") -> String {
        wire([line, "Host: a"] + lines + ["", ""])
    }

    @Test func theRequestLineIsMethodTargetVersionWithSingleSpaces() {
        #expect(refusal(head(line: "GET / HTTP/1.1")) == nil)
        for line in ["GET  / HTTP/1.1", "GET /  HTTP/1.1", "GET / HTTP/1.1 ", " GET / HTTP/1.1", "GET\t/ HTTP/1.1", "GET / http/1.1",
                     "GET /", "GET / HTTP/1.1.1", "G(ET / HTTP/1.1", "GET /a\u{01}b HTTP/1.1", "GET /é HTTP/1.1", "GET / HTTP/11",
                     "GET / HTTP/1.1\r", "/ HTTP/1.1"] {
            #expect(refusal(head(line: line)) == .malformedRequestLine, "\(line.debugDescription)")
        }
    }

    @Test func onlyHTTP10And11AreSpoken() {
        for line in ["GET / HTTP/2.0", "GET / HTTP/1.2", "PRI * HTTP/2.0", "GET / HTTP/0.9"] {
            #expect(refusal(head(line: line)) == .unsupportedVersion, "\(line)")
        }
        #expect(WireRefusal.unsupportedVersion.status == 505)
    }

    @Test func theTargetSuitsTheMethod() {
        for line in ["CONNECT /x HTTP/1.1", "CONNECT a.test HTTP/1.1", "CONNECT a.test:99999 HTTP/1.1", "CONNECT a@b:1 HTTP/1.1",
                     "GET * HTTP/1.1", "GET a.test:443 HTTP/1.1", "GET http:///x HTTP/1.1", "GET /a#frag HTTP/1.1", "GET 1http://a/ HTTP/1.1",
                     "CONNECT [::1 HTTP/1.1", "CONNECT a.test: HTTP/1.1"] {
            #expect(refusal(head(line: line)) == .malformedTarget, "\(line)")
        }
        for line in ["CONNECT a.test:443 HTTP/1.1", "OPTIONS * HTTP/1.1", "GET http://a.test HTTP/1.1", "GET //x HTTP/1.1"] {
            #expect(refusal(head(line: line)) == nil, "\(line)")
        }
    }

    @Test func bareLineFeedsAreRefused() {
        #expect(refusal("GET / HTTP/1.1\nHost: a\r\n\r\n") == .malformedRequestLine)
        #expect(refusal("GET / HTTP/1.1\r\nHost: a\nX: 1\r\n\r\n") == .malformedHeader)
        #expect(refusal("GET / HTTP/1.1\r\nHost: a\r\n\n") == .malformedHeader)
        #expect(refusal("\nGET / HTTP/1.1\r\nHost: a\r\n\r\n") == .malformedRequestLine)
        #expect(refusal("GET / HTTP/1.1\r\nHost: a\r\nX: a\rb\r\n\r\n") == .malformedHeader)
    }

    @Test func headerLinesAreTokenColonCleanValue() {
        #expect(refusal(head("X-A: 1")) == nil)
        for line in ["X-A : 1", "X-A\t: 1", "X A: 1", ": 1", "X-A 1", "X-A: a\u{00}b", "X-A: a\u{7F}", "X(A): 1", "Host\u{0B}: b"] {
            #expect(refusal(head(line)) == .malformedHeader, "\(line.debugDescription)")
        }
        let invalidUTF8 = Array(head("X-A: a").utf8).map { $0 == UInt8(ascii: "a") ? 0xFF : $0 }
        #expect(feed(invalidUTF8).refusal == .malformedHeader)
    }

    @Test func foldedLinesAreRefused() {
        #expect(refusal(head("X-A: 1", " continued")) == .obsoleteLineFolding)
        #expect(refusal(head("X-A: 1", "\tcontinued")) == .obsoleteLineFolding)
        #expect(refusal(wire(["GET / HTTP/1.1", " Host: a", "", ""])) == .obsoleteLineFolding)
    }

    @Test func lookalikesOfFramingHeadersAreRefused() {
        #expect(refusal(head("Content_Length: 5")) == .lookalikeHeaderName)
        #expect(refusal(head("transfer_encoding: chunked")) == .lookalikeHeaderName)
        #expect(refusal(head("X_Forwarded_For: 1.2.3.4")) == nil)
    }

    @Test func contentLengthIsDigitsOnly() {
        for value in ["+5", "-5", "5 5", "0x5", "", "5,", ",5", "5;", "1e3", "٣"] {
            #expect(refusal(head("Content-Length: \(value)")) == .invalidContentLength, "\(value)")
        }
        #expect(refusal(head("Content-Length: 99999999999999999999")) == .invalidContentLength)
        #expect(refusal(head("Content-Length: 9223372036854775808")) == .invalidContentLength)
    }

    @Test func contentLengthsMustAgree() {
        #expect(refusal(head("Content-Length: 5", "Content-Length: 6")) == .differingContentLengths)
        #expect(refusal(head("Content-Length: 5, 6")) == .differingContentLengths)
        #expect(refusal(head("Content-Length: 5", "Content-Length: 5") + "12345") == nil)
    }

    @Test func lengthAndChunkedTogetherAreRefused() {
        #expect(refusal(head("Content-Length: 5", "Transfer-Encoding: chunked")) == .lengthAndChunked)
        #expect(refusal(head("Transfer-Encoding: chunked", "content-length: 0")) == .lengthAndChunked)
        #expect(refusal(head("Transfer-Encoding: gzip", "Content-Length: x")) == .lengthAndChunked)
    }

    @Test func onlyChunkedAloneIsATransferEncoding() {
        for value in ["gzip, chunked", "chunked, chunked", "identity", "chunked;q=1", "", "chunked,", "xchunked"] {
            #expect(refusal(head("Transfer-Encoding: \(value)")) == .unsupportedTransferEncoding, "\(value)")
        }
        #expect(refusal(head("Transfer-Encoding: chunked", "Transfer-Encoding: chunked")) == .unsupportedTransferEncoding)
        #expect(WireRefusal.unsupportedTransferEncoding.status == 501)
    }

    @Test func http10HasNoTransferEncoding() {
        #expect(refusal(wire(["POST / HTTP/1.0", "Transfer-Encoding: chunked", "", "0", "", ""])) == .transferEncodingInHTTP10)
    }

    @Test func connectHasNoBody() {
        #expect(refusal(head("Content-Length: 5", line: "CONNECT a:443 HTTP/1.1")) == .connectWithBody)
        #expect(refusal(head("Transfer-Encoding: chunked", line: "CONNECT a:443 HTTP/1.1")) == .connectWithBody)
        #expect(refusal(head("Content-Length: 0", line: "CONNECT a:443 HTTP/1.1")) == nil)
    }

    @Test func http11NeedsExactlyOneHost() {
        #expect(refusal(wire(["GET / HTTP/1.1", "Accept: x", "", ""])) == .missingHost)
        #expect(refusal(head("Host: b")) == .multipleHosts)
        #expect(refusal(wire(["GET / HTTP/1.0", "Host: a", "HOST: a", "", ""])) == .multipleHosts)
        #expect(refusal(wire(["GET / HTTP/1.0", "", ""])) == nil)
        #expect(refusal(wire(["GET / HTTP/1.1", "Host:", "", ""])) == nil)
    }

    @Test func theHostIsANameOrAddressWithAPort() {
        for value in ["a b", "a,b", "a/b", "u@a", "a:x", "a:123456", "[::1", "[::1]x", "a:"] {
            #expect(refusal(wire(["GET / HTTP/1.1", "Host: \(value)", "", ""])) == .invalidHost, "\(value)")
        }
        for value in ["a.test", "a.test:8080", "10.0.0.1:443", "[2001:db8::1]:443", "xn--bcher-kva.example"] {
            #expect(refusal(wire(["GET / HTTP/1.1", "Host: \(value)", "", ""])) == nil, "\(value)")
        }
    }

    @Test func anExpectationOtherThan100ContinueIsRefused() {
        #expect(refusal(head("Expect: 100-continue")) == nil)
        #expect(refusal(head("Expect: 200-ok")) == .unsupportedExpectation)
        #expect(refusal(head("Expect: 100-continue, x")) == .unsupportedExpectation)
        #expect(WireRefusal.unsupportedExpectation.status == 417)
    }

    @Test func everyRefusalHasAStatusAndOnePlainSentence() {
        for refusal in WireRefusal.allCases {
            #expect([400, 413, 417, 431, 501, 505].contains(refusal.status))
            #expect(!refusal.reason.isEmpty && !refusal.reason.contains("\n") && refusal.reason.first?.isLowercase == true)
        }
        #expect(WireRefusal.lengthAndChunked.status == 400 && WireRefusal.bodyTooLarge.status == 413 && WireRefusal.headTooLarge.status == 431)
    }

    @Test func aDeadReaderKeepsRefusing() {
        var reader = RequestReader()
        reader.append(Array(head("Content-Length: 1", "Content-Length: 2").utf8))
        #expect(throws: WireRefusal.differingContentLengths) { try reader.next() }
        reader.append(Array(head().utf8))
        #expect(throws: WireRefusal.differingContentLengths) { try reader.next() }
        #expect(reader.buffered == 0)
    }
}
