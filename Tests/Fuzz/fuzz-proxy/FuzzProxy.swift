import Foundation
import FuzzReplay
import ProxyWire

/// libFuzzer target (`make fuzz`) for the proxy's request reader: the same bytes make the same events
/// and refusal however they are cut; a request's body keeps to its framing and the limits; and a
/// request as the proxy forwards it (its own field filter, the body framed by length) reads upstream as
/// the same request without its hop-by-hop fields. Small limits, so the fuzzer reaches them. Without
/// `-D FUZZING` it replays the files it is given, and an input named `ambiguous-*` must be refused by
/// the reader as the proxy runs it (its default limits): the reader is where the proxy refuses a request
/// that parsers can read two ways, before anything is forwarded. (That the proxy itself answers such a
/// request with its refusal and forwards none of it, and forwards the others as read, is checked through
/// the running proxy in `ShopProxyTests/CorpusThroughProxyTests.swift`.)
let limits = WireLimits(maxHeadBytes: 512, maxHeaderCount: 8, maxBodyBytes: 1024, maxChunkLineBytes: 64)

struct Outcome: Equatable {
    var events: [WireEvent] = []
    var refusal: WireRefusal?
    var remaining: [UInt8] = []
    var buffered = 0
}

/// Feeds the bytes cut at `cuts`, taking every event after each piece, as the proxy does.
func read(_ bytes: [UInt8], cuts: [Int], limits: WireLimits) -> Outcome {
    var reader = RequestReader(limits: limits)
    var outcome = Outcome()
    var from = 0
    for cut in cuts.filter({ $0 > 0 && $0 < bytes.count }).sorted() + [bytes.count] where cut >= from {
        reader.append(bytes[from..<cut])
        from = cut
        do {
            while let event = try reader.next() { outcome.events.append(event) }
        } catch {
            outcome.refusal = error
            do {
                _ = try reader.next()
                preconditionFailure("a reader that refused read on")
            } catch {
                precondition(error == outcome.refusal, "a dead reader changed its refusal")
            }
            break
        }
    }
    outcome.buffered = reader.buffered
    outcome.remaining = reader.takeRemaining()
    return outcome
}

/// The request as the proxy forwards it: the fields its own filter keeps (`HopByHop.filtered`, what
/// `UpstreamExchange` hands its transport), a Host, and the body it read framed by Content-Length, as the
/// transport writes it upstream (neither body nor length when the request had neither).
func forwarded(_ head: RequestHead, _ body: [UInt8]) -> [UInt8] {
    var text = "\(head.method) \(head.target) HTTP/1.1\r\nHost: upstream.invalid\r\n"
    for field in HopByHop.filtered(head.headers) { text += "\(field.name): \(field.value)\r\n" }
    let sendsBody = !(head.framing == .none && body.isEmpty)
    if sendsBody { text += "Content-Length: \(body.count)\r\n" }
    return Array((text + "\r\n").utf8) + (sendsBody ? body : [])
}

/// The fields that describe one hop (RFC 9110 §7.6.1, and the proxy's own credentials), and those the
/// proxy sets itself (framing, Host): written out here, not taken from the proxy's list, so a name that
/// list loses fails the check.
let hopByHop: Set<String> = ["connection", "proxy-connection", "keep-alive", "te", "trailer", "transfer-encoding", "upgrade",
                             "proxy-authorization", "proxy-authenticate", "expect", "content-length", "host"]

/// What the upstream reads of a request the proxy forwards: one request, the same method, target and
/// body, no hop-by-hop field and none its Connection named, every other field kept in order.
func checkForwarded(_ head: RequestHead, _ body: [UInt8], limits: WireLimits) {
    let upstream = read(forwarded(head, body), cuts: [], limits: limits)
    guard upstream.refusal == nil, upstream.events.count == 2, case let .request(sent, sentBody) = upstream.events[1] else {
        preconditionFailure("the request as forwarded does not read as one request (\(String(describing: upstream.refusal)))")
    }
    precondition(sent.method == head.method && sent.target == head.target, "forwarded with another method or target")
    precondition(sentBody == body, "forwarded with another body than the one read")
    let named = Set(head.headers.filter { $0.name.lowercased() == "connection" }
        .flatMap { $0.value.split(separator: ",").map { String($0.filter { $0 != " " && $0 != "\t" }).lowercased() } })
    let endToEnd = head.headers.filter { !hopByHop.contains($0.name.lowercased()) && !named.contains($0.name.lowercased()) }
    let kept = sent.headers.filter { !["host", "content-length"].contains($0.name.lowercased()) }
    precondition(kept == endToEnd, "the fields forwarded are not the request's end-to-end fields")
}

/// The refusals that are a limit, not an ambiguity: an ambiguous input refused for one of these was not
/// refused for what it is.
let limitRefusals: Set<WireRefusal> = [.headTooLarge, .tooManyHeaders, .trailersTooLarge, .bodyTooLarge]

/// A corpus input named `ambiguous-*`: the reader with the proxy's own limits (`ProxyConfiguration`'s
/// default, `WireLimits()`) refuses it for what it is, before any request of it is whole.
func checkRefused(_ name: String, _ bytes: [UInt8]) {
    let asTheProxyReads = read(bytes, cuts: [], limits: WireLimits())
    guard let refusal = asTheProxyReads.refusal else {
        preconditionFailure("\(name): the reader accepted an ambiguous request (events: \(asTheProxyReads.events.count))")
    }
    precondition(!limitRefusals.contains(refusal), "\(name): refused for a limit (\(refusal)), not for its ambiguity")
    precondition(!asTheProxyReads.events.contains { if case .request = $0 { true } else { false } },
                 "\(name): a request was read whole before the refusal")
    precondition(read(bytes, cuts: [], limits: limits).refusal != nil, "\(name): accepted under the fuzzer's limits")
}

func check(_ bytes: [UInt8]) {
    let whole = read(bytes, cuts: [], limits: limits)
    precondition(whole.buffered <= bytes.count, "the reader holds more than it was given")
    precondition(whole.remaining.isEmpty || whole.remaining.count == whole.buffered, "a tunnel's bytes are not all it holds")
    var open: RequestHead?
    for event in whole.events {
        switch event {
        case .head(let head):
            precondition(open == nil, "a head came before the last request was whole")
            precondition(head.headers.count <= limits.maxHeaderCount, "more header fields than the limit")
            precondition(head.minorVersion == 0 || head.minorVersion == 1, "a version other than 1.0 or 1.1")
            open = head
        case .request(let head, let body):
            precondition(open == head, "a request without its head just before it")
            open = nil
            precondition(body.count <= limits.maxBodyBytes, "a body larger than the limit")
            switch head.framing {
            case .none: precondition(body.isEmpty, "a body without framing")
            case .length(let n): precondition(body.count == n, "a body of another length than its Content-Length")
            case .chunked: break
            }
            var wider = limits
            wider.maxHeadBytes += limits.maxHeaderCount + 1
            wider.maxHeaderCount += 2  // the Host and Content-Length the forwarded request carries
            checkForwarded(head, body, limits: wider)
        }
    }
    let n = bytes.count
    var cutSets = [[1], [n / 2], [n / 3, 2 * n / 3], [n - 1], Array(stride(from: 0, to: n, by: 7))]
    if n <= 300 { cutSets.append(Array(0..<n)) }
    let seed = bytes.reduce(5381) { ($0 &* 33) &+ Int($1) }
    cutSets.append((1...4).map { abs(seed >> ($0 * 8)) % max(n, 1) })
    for cuts in cutSets {
        precondition(read(bytes, cuts: cuts, limits: limits) == whole, "cut at \(cuts.prefix(8)) the bytes read otherwise")
    }
}

#if FUZZING
@_cdecl("fuzz_proxy_main")
func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    FuzzDriver.run(argc, argv) { data, size in
        check(FuzzDriver.bytes(data, size))
        return 0
    }
}
#else
@main struct Replay {
    static func main() {
        var ambiguous = 0
        FuzzReplay.run { name, bytes in
            check(bytes)
            if name.hasPrefix("ambiguous-") {
                checkRefused(name, bytes)
                ambiguous += 1
            }
        }
        print("fuzz-proxy: \(ambiguous) ambiguous inputs refused")
        // The corpus (a folder) keeps the ambiguous inputs; one file replayed alone need not be one.
        let folders = CommandLine.arguments.dropFirst().filter { path in
            var isFolder: ObjCBool = false
            return FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) && isFolder.boolValue
        }
        if !folders.isEmpty, ambiguous == 0 {
            FileHandle.standardError.write(Data("error: fuzz-proxy: no ambiguous-* input in \(folders.joined(separator: ", "))\n".utf8))
            exit(1)
        }
    }
}
#endif
