/// Reads a client's HTTP/1.1 requests from its bytes as they arrive (RFC 9112, strictly): a request
/// that parsers could read two ways, or that breaks a limit, is refused, never guessed at.
///
/// Feed bytes with `append`, then call `next` until it gives nil. Each request gives `.head` (once its
/// head is whole) and then `.request` (once its body is). After a request with `keepAlive` false the
/// reader reads nothing more; after a CONNECT it holds later bytes for `takeRemaining`.
public struct RequestReader: Sendable {
    public let limits: WireLimits
    /// The bytes received; those before `start` are read and done with.
    var buffer: [UInt8] = []
    var start = 0
    /// A chunked body de-chunked so far.
    var decoded: [UInt8] = []
    private var stage: Stage = .head(FieldScan(.head))

    private enum Stage: Sendable {
        /// Looking for the end of a head.
        case head(FieldScan)
        /// The head given; reading its body.
        case body(RequestHead, BodyProgress)
        /// After a CONNECT: bytes are the tunnel's, held for `takeRemaining`.
        case tunnel
        /// After a request that closes the connection: nothing more is read.
        case closed
        case dead(WireRefusal)
    }

    private enum BodyProgress: Sendable {
        case length(Int)
        case chunked(ChunkState)
    }

    public init(limits: WireLimits = WireLimits()) {
        self.limits = limits
    }

    /// Bytes held: received and not yet given out in an event, and a chunked body de-chunked so far.
    public var buffered: Int { buffer.count - start + decoded.count }

    /// Adds bytes received from the client (ignored once the reader has refused or is closed).
    public mutating func append(_ bytes: some Collection<UInt8>) {
        guard accepting else { return }
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// Adds bytes received from the client (ignored once the reader has refused or is closed).
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard accepting else { return }
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// The next event the bytes so far make; nil when more bytes are needed (or after a CONNECT, or a
    /// request that closes the connection). After `.head` comes the same request's `.request`, each
    /// from its own call; after `.request` the next pipelined request. Once it throws, the reader is
    /// dead: every later call throws the same.
    public mutating func next() throws(WireRefusal) -> WireEvent? {
        do throws(WireRefusal) {
            return try step()
        } catch {
            stage = .dead(error)
            buffer = []
            decoded = []
            start = 0
            throw error
        }
    }

    /// After a CONNECT's `.request`: the bytes received beyond its head (the TLS ClientHello, the
    /// tunnel's first bytes), handed over once. Empty at any other time.
    public mutating func takeRemaining() -> [UInt8] {
        guard case .tunnel = stage else { return [] }
        let rest = Array(buffer[start...])
        buffer = []
        start = 0
        return rest
    }

    private var accepting: Bool {
        switch stage {
        case .dead, .closed: false
        case .head, .body, .tunnel: true
        }
    }

    /// Drops the bytes read already, when that is cheap against what stays.
    private mutating func compact() {
        guard start > 0 else { return }
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 1 << 16)
            start = 0
        } else if start >= 1 << 12, start * 2 >= buffer.count {
            buffer.removeSubrange(..<start)
            start = 0
        }
    }

    private mutating func step() throws(WireRefusal) -> WireEvent? {
        switch stage {
        case .dead(let refusal):
            throw refusal
        case .tunnel, .closed:
            return nil
        case .head(var scan):
            let outcome = buffer.withUnsafeBufferPointer { scan.scan(UnsafeBufferPointer(rebasing: $0[start...]), limits: limits) }
            switch outcome {
            case .more:
                stage = .head(scan)
                return nil
            case .refused(let refusal):
                throw refusal
            case .end(let length):
                let parser = HeadParser(limits: limits)
                let parsed = buffer.withUnsafeBufferPointer { whole in
                    Result { () throws(WireRefusal) in
                        try parser.parse(UnsafeBufferPointer(rebasing: whole[start..<(start + length)]), first: scan.firstLine)
                    }
                }
                let head = try parsed.get()
                start += length
                switch head.framing {
                case .none: stage = .body(head, .length(0))
                case .length(let n): stage = .body(head, .length(n))
                case .chunked: stage = .body(head, .chunked(.size(scanned: 0)))
                }
                return .head(head)
            }
        case .body(let head, .length(let n)):
            guard buffer.count - start >= n else { return nil }
            let body = Array(buffer[start..<(start + n)])
            start += n
            return finish(head, body)
        case .body(let head, .chunked(var state)):
            guard try readChunks(&state) else {
                stage = .body(head, .chunked(state))
                return nil
            }
            let body = decoded
            decoded = []
            return finish(head, body)
        }
    }

    /// The request is whole: what comes after it is the next request, a tunnel's, or nothing.
    private mutating func finish(_ head: RequestHead, _ body: [UInt8]) -> WireEvent {
        if head.method == "CONNECT" {
            stage = .tunnel
        } else if head.keepAlive {
            stage = .head(FieldScan(.head))
        } else {
            stage = .closed
            buffer = []
            start = 0
        }
        return .request(head, body: body)
    }
}
