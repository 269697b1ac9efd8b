import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The app, as a plain socket: writes what a test gives it, reads answers as they come (blocking, with
/// a 5 s limit), so that nothing between the test and the proxy tidies the bytes up.
final class RawClient {
    struct Answer {
        var status: Int
        var headers: [(String, String)]
        var body: String
        func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
    }

    struct Failure: Error, CustomStringConvertible { var description: String }

    private let fd: Int32
    private var buffer: [UInt8] = []

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket") }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw Failure(description: "connect")
        }
    }

    deinit { close(fd) }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw Failure(description: "send") }
            sent += n
        }
    }

    /// More bytes, or a failure at the end of the stream or the time limit.
    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { throw Failure(description: n == 0 ? "closed" : "timed out") }
        buffer += chunk[..<n]
    }

    func readHead() throws -> Answer {
        let end: [UInt8] = Array("\r\n\r\n".utf8)
        while true {
            if let range = firstRange(of: end) {
                let head = String(decoding: buffer[..<range.lowerBound], as: UTF8.self)
                buffer.removeSubrange(..<range.upperBound)
                var lines = head.components(separatedBy: "\r\n")
                let statusLine = lines.removeFirst().split(separator: " ")
                guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw Failure(description: "status line") }
                let headers = lines.compactMap { line -> (String, String)? in
                    guard let colon = line.firstIndex(of: ":") else { return nil }
                    return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
                }
                return Answer(status: status, headers: headers, body: "")
            }
            try fill()
        }
    }

    /// A whole answer (framed by Content-Length; an interim 1xx is skipped unless it is all there is).
    func readAnswer() throws -> Answer {
        var answer = try readHead()
        while (100..<200).contains(answer.status) { answer = try readHead() }
        let length = Int(answer.header("Content-Length") ?? "0") ?? 0
        while buffer.count < length { try fill() }
        answer.body = String(decoding: buffer[..<length], as: UTF8.self)
        buffer.removeSubrange(..<length)
        return answer
    }

    /// How the stream ended for `readToEnd`.
    enum Ending: Equatable { case closed, reset, timedOut }

    /// Every byte until the proxy ends the stream (the bytes read before, unframed, included).
    func readToEnd() -> (bytes: [UInt8], ending: Ending) {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                buffer += chunk[..<n]
                continue
            }
            defer { buffer = [] }
            return (buffer, n == 0 ? .closed : errno == ECONNRESET ? .reset : .timedOut)
        }
    }

    /// The app gives up: its side of the connection closes (FIN).
    func hangUp() { shutdown(fd, Int32(SHUT_RDWR)) }

    func exchange(_ request: String) throws -> Answer {
        try send(request)
        return try readAnswer()
    }

    private func firstRange(of needle: [UInt8]) -> Range<Int>? {
        guard buffer.count >= needle.count else { return nil }
        for i in 0...(buffer.count - needle.count) where buffer[i..<(i + needle.count)].elementsEqual(needle) { return i..<(i + needle.count) }
        return nil
    }
}
