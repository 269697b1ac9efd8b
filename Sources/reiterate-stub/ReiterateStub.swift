import ArgumentParser
import Dispatch
import Foundation
import StubCore
import StubServer

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@main
struct ReiterateStub: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reiterate-stub",
        abstract: "Local staging stand-in for the Reiterate shop API, with fault injection.",
        discussion: """
            Fault syntax (repeat --fault; the same keys work as JSON on POST /_stub/faults):
              KIND[,key=value...]   kinds: \(FaultKind.allCases.map(\.rawValue).joined(separator: ", "))
              keys: \(FaultSpec.keys.joined(separator: ", "))
            Examples:
              --fault status,status=503,path=/api/v1/balance,count=2
              --fault latency,ms=800,jitter=400,path=/api/*
              --fault hostile,path=/api/v1/cheer_history
            """
    )

    @Option(help: "Address to bind.") var host = "127.0.0.1"
    @Option(help: "Port to listen on; 0 takes a free port.") var port = 8080
    @Option(help: "Seed of the generated shop data.") var seed: UInt64 = SeedData.defaultSeed
    @Option(help: "Valid access token.") var token = "dev-token"
    @Option(name: .customLong("refresh-token"), help: "Valid refresh token (rotated by auth/refresh).") var refreshToken = "dev-refresh"
    @Option(name: .customLong("token-ttl"), help: "Seconds an access token stays valid (default: forever).") var tokenTTL: Double?
    @Option(name: .customLong("whale-history"), help: "Number of history entries of qa-whale.") var whaleHistory = SeedData.defaultWhaleHistory
    @Option(name: .customLong("fault"), help: "A fault to inject from the start (repeatable).") var faultSpecs: [String] = []
    @Flag(name: .customLong("quiet"), help: "No request log on stderr.") var quiet = false
    @Option(name: .customLong("tls-cert"), help: "Serve HTTPS with this certificate chain (PEM); needs --tls-key. `make certs` makes a throwaway CA and one.")
    var tlsCert: String?
    @Option(name: .customLong("tls-key"), help: "The private key (PEM) of --tls-cert.") var tlsKey: String?
    @Option(name: .customLong("appstore-dir"),
            help: "Write the App Store side's test root (root.pem), API key (AuthKey_STUBKEY001.p8, 0600) and appstore.json here at start.")
    var appStoreDir: String?
    @Flag(name: .customLong("appstore-verify"), help: "purchase_cheer verifies each transaction with the App Store side before it credits.")
    var appStoreVerify = false

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0...65535") }
        guard (0...SeedData.maxGeneratedHistory).contains(whaleHistory) else {
            throw ValidationError("--whale-history must be 0...\(SeedData.maxGeneratedHistory)")
        }
        if let tokenTTL, !(tokenTTL.isFinite && tokenTTL > 0 && tokenTTL <= 315_360_000) {
            throw ValidationError("--token-ttl must be a number of seconds, more than 0 and at most 10 years")
        }
        if (tlsCert == nil) != (tlsKey == nil) { throw ValidationError("--tls-cert and --tls-key go together") }
        for spec in faultSpecs {
            do { _ = try FaultSpec.parse(spec) } catch { throw ValidationError("--fault: \(error)") }
        }
    }

    func run() async throws {
        let settings = StubSettings(
            host: host, port: port,
            shop: ShopConfig(seed: seed, whaleHistory: whaleHistory, accessToken: token, refreshToken: refreshToken, tokenTTL: tokenTTL,
                             appStoreVerify: appStoreVerify),
            faults: try faultSpecs.map(FaultSpec.parse),
            requestLog: !quiet,
            tls: tlsCert.flatMap { cert in tlsKey.map { (certificate: cert, key: $0) } }
        )
        let signalSources = Self.stopOnSignals()
        defer { signalSources.forEach { $0.cancel() } }
        let host = self.host
        let tls = settings.tls != nil
        if let files = settings.tls {
            do {
                _ = try StubApplication.tlsConfiguration(certificate: files.certificate, key: files.key)
            } catch {
                throw ValidationError("--tls-cert/--tls-key: the certificate or the key could not be read as PEM")
            }
        }
        let service = try StubService(settings: settings)
        if let appStoreDir {
            do {
                _ = try service.appStore.writeFiles(to: appStoreDir)
            } catch {
                throw ValidationError("--appstore-dir: \(error)")
            }
        }
        let app = try StubApplication.make(settings: settings, service: service) { port in
            // Unbuffered: scripts wait for this exact first line.
            FileHandle.standardOutput.write(Data("reiterate-stub listening on \(StubApplication.url(host: host, port: port, tls: tls))\n".utf8))
        }
        try await app.run()
    }

    /// SIGINT/SIGTERM end the stand-in at once: it holds nothing worth a graceful drain, and a request
    /// held by a `hang` fault must not keep it alive.
    static func stopOnSignals() -> [any DispatchSourceSignal] {
        [SIGINT, SIGTERM].map { sig in
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { @Sendable in
                FileHandle.standardError.write(Data("reiterate-stub: stopping (signal \(sig))\n".utf8))
                Foundation.exit(0)
            }
            source.resume()
            return source
        }
    }
}

