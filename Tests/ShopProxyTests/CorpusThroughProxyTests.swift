import Foundation
import ProxyWire
import ShopAPI
import StubServer
import Testing
@testable import ShopProxy

// Inside ProxyServerTests (serialized, with what it nests): RawClient blocks a thread of the test pool
// while it reads, and a third proxy suite beside the two others starves the pool on two cores.
extension ProxyServerTests {
    /// The proxy-fuzz corpus (`Tests/Fuzz/corpus/fuzz-proxy`) sent through the running proxy, so its own
    /// reader and forwarding code decide: every `ambiguous-*` input is answered with the proxy's refusal
    /// and none of it reaches the pipeline or the server; the plain inputs are forwarded as the reader read
    /// them. Each input is aimed at the stand-in first: its request targets made absolute URLs of the
    /// stand-in's (all on one path, `aimedPath`), its Host values the stand-in's; nothing else changes
    /// (line ends, folding, lookalike names and duplicate fields stay as they are).
    @Suite struct CorpusThroughProxyTests: ProxyTesting {
        static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fuzz/corpus/fuzz-proxy")
        static let aimedPath = "/api/v1/balance"

        static func input(_ name: String) throws -> [UInt8] {
            Array(try Data(contentsOf: folder.appendingPathComponent(name)))
        }

        /// The input with its targets and Host values the stand-in's (see the suite's note).
        static func aimed(_ bytes: [UInt8], at stub: RunningStub) -> [UInt8] {
            // By bytes: as a String, "\r\n" is one Character and a split on "\n" would not see it.
            let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line -> [UInt8] in
                let cr = line.last == UInt8(ascii: "\r")
                let bare = String(decoding: cr ? line.dropLast() : line, as: UTF8.self)
                let end = cr ? "\r" : ""
                let words = bare.split(separator: " ", omittingEmptySubsequences: false)
                if words.count == 3, words[2].hasPrefix("HTTP/1."), words[0].allSatisfy(\.isUppercase),
                   words[1].hasPrefix("/") || words[1].hasPrefix("http://") {
                    return Array("\(words[0]) \(stub.url)\(aimedPath) \(words[2])\(end)".utf8)
                }
                if bare.lowercased().hasPrefix("host:") {
                    return Array("\(bare.prefix { $0 != ":" }): 127.0.0.1:\(stub.port)\(end)".utf8)
                }
                return Array(line)
            }
            return Array(lines.joined(separator: [UInt8(ascii: "\n")]))
        }

        /// What the proxy's reader makes of the bytes with the proxy's limits: the requests, or its refusal.
        static func read(_ bytes: [UInt8]) -> (requests: [(RequestHead, [UInt8])], refusal: WireRefusal?) {
            var reader = RequestReader(limits: WireLimits())  // the proxy's: ProxyConfiguration's default
            reader.append(bytes[...])
            var requests: [(RequestHead, [UInt8])] = []
            do {
                while let event = try reader.next() {
                    if case let .request(head, body) = event { requests.append((head, body)) }
                }
            } catch {
                return (requests, error)
            }
            return (requests, nil)
        }

        @Test func everyAmbiguousInputIsRefusedAndNothingOfItIsForwarded() async throws {
            let names = try FileManager.default.contentsOfDirectory(atPath: Self.folder.path).filter { $0.hasPrefix("ambiguous-") }.sorted()
            #expect(names.count >= 8, "the corpus has lost its ambiguous inputs: \(names)")
            let events = Events()
            let (stub, proxy, transport, seen) = try await start(events: events)
            for name in names {
                let bytes = Self.aimed(try Self.input(name), at: stub)
                #expect(String(decoding: bytes, as: UTF8.self).contains(" \(stub.url)\(Self.aimedPath) HTTP/1."), "\(name): not aimed")
                // The aiming keeps what is ambiguous: the reader refuses the aimed input as it does the input.
                #expect(Self.read(bytes).refusal != nil, "\(name): the aimed input reads without a refusal")
                do {
                    let app = try RawClient(port: proxy.address.port)
                    try app.send(String(decoding: bytes, as: UTF8.self))
                    let answer = try app.readAnswer()
                    #expect(answer.header("X-Reiterate-Proxy") == "refused" && [400, 501].contains(answer.status),
                            "\(name): answered \(answer.status) \(answer.body)")
                    #expect(app.readToEnd().ending == .closed, "\(name): the connection was kept open after the refusal")
                } catch {
                    Issue.record("\(name): \(error)")
                }
            }
            #expect(events.refusals.count == names.count)
            // The moment has passed once a plain request sent after them, to the same path, has been through
            // the proxy to the server and back through the pipeline: then nothing else may be there.
            let marker = "GET \(stub.url)\(Self.aimedPath)?user_id=qa-alice HTTP/1.1\r\nHost: 127.0.0.1:\(stub.port)\r\n"
                + "Authorization: Bearer dev-token\r\nX-Corpus-Marker: after\r\n\r\n"
            #expect(try RawClient(port: proxy.address.port).exchange(marker).status == 200)
            try await waitFor { await seen.exchanges.count >= 1 }
            let arrived = await stub.recorder.all()
            #expect(arrived.count == 1 && arrived.first?.header("X-Corpus-Marker") == "after",
                    "reached the server: \(arrived.map { "\($0.method) \($0.uri)" })")
            #expect(await seen.exchanges.count == 1)
            #expect(await seen.exchanges.first?.request.headers.contains { $0.name.rawName == "X-Corpus-Marker" && $0.value == "after" } == true)
            await stop(stub, proxy, transport)
        }

        /// The control: the same aiming on the plain inputs gives requests the proxy forwards, with the
        /// method and the body its reader read (so the refusals above are the reader's, not the aiming's).
        @Test(arguments: ["get.http", "post-length.http", "chunked-trailers.http"])
        func aPlainInputIsForwardedAsTheReaderReadIt(name: String) async throws {
            let (stub, proxy, transport, seen) = try await start()
            let bytes = Self.aimed(try Self.input(name), at: stub)
            let read = Self.read(bytes)
            #expect(read.refusal == nil && read.requests.count == 1, "\(name): \(String(describing: read.refusal))")
            let (head, body) = try #require(read.requests.first)
            let app = try RawClient(port: proxy.address.port)
            try app.send(String(decoding: bytes, as: UTF8.self))
            let answer = try app.readAnswer()
            #expect(answer.header("X-Reiterate-Proxy") == nil, "\(name): \(answer.status) \(answer.body) for \(String(decoding: bytes, as: UTF8.self))")
            try await waitFor { await seen.exchanges.count == 1 }
            let forwarded = try #require(await seen.exchanges.first)
            #expect(forwarded.request.key.method.rawValue == head.method && forwarded.request.key.path == Self.aimedPath)
            #expect((forwarded.request.body ?? []) == body, "\(name): forwarded another body")
            #expect(!Self.aimed(try Self.input(name), at: stub).elementsEqual(try Self.input(name)), "\(name): not aimed")
            let arrived = await stub.recorder.all()
            #expect(arrived.map(\.method) == [head.method] && arrived.first?.body == body, "\(name): the server got \(arrived.map { "\($0.method) \($0.uri)" })")
            await stop(stub, proxy, transport)
        }
    }
}
