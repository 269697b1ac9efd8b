import ArgumentParser
import Foundation
import ProxyCA
import ShopAPI
import ShopProbes
import ShopProxy
import ShopSettings
import ShopViewModels
import TerminalText

/// `reiterate-shop proxy`: the app's own traffic, seen through an intercepting proxy and checked as the
/// tool's own is. `proxy ca` writes the CA to install on the phone.
struct ProxyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "proxy",
        abstract: "Run an intercepting proxy for the app under test: every app request and answer checked against the contract.",
        discussion: """
            Point the phone's Wi-Fi proxy (or the Simulator's Mac) at it and install its CA (`proxy ca`, or
            http://HOST:PORT/ from the phone). HTTPS to the environment's host (and `proxy_hosts`) is
            decrypted and checked; every other host passes through as a blind tunnel. docs/proxy.md.
            """,
        subcommands: [ProxyRun.self, ProxyCACommand.self],
        defaultSubcommand: ProxyRun.self
    )
}

/// The proxy in the foreground: one line per app exchange, findings as `warning:` lines.
struct ProxyRun: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the proxy (the default): a line per app exchange until --count, --for, Ctrl-C or SIGTERM.",
        discussion: """
            Listens on --listen, else the environment's proxy_listen, else 127.0.0.1:8877. Beyond this machine it
            needs a password in REITERATE_PROXY_PASSWORD (the phone sends it as the proxy's password).
            Exit status: 0; 65 with --strict when a finding was made; 69 the proxy could not listen; 78 bad setting.
            """
    )

    @Option(help: "Where to listen: HOST:PORT (default 127.0.0.1:8877, or the environment's proxy_listen).") var listen: String?
    @Option(help: "Stop after this many app exchanges.") var count: Int?
    @Option(name: .customLong("for"), help: "Stop after this long: 90s, 5m, 1h, or seconds.") var duration: String?
    @Flag(help: "One JSON object a line: time, kind (exchange, finding, tunnel, error), source, method, path, status, request_id, ms; check and blame for a finding.")
    var json = false
    @Flag(help: "Exit 65 when any finding was made (with --watch: at the first).") var strict = false
    @Flag(help: "Also watch the user (--user): each change the reads see is paired with the app's writes that explain it, and the verdicts only that pairing gives are made.")
    var watch = false
    @Option(help: "With --watch: seconds between reads (default 2, or the environment's watch_interval).") var interval: Double?
    @Option(name: .customLong("fault"), help: ArgumentHelp("Put a fault into the app's traffic: KIND[,key=value...] as the stand-in's (latency, status, html, rate_limit, hang, reset, truncate, offline, lose_answer; path, method, count, rate…). Repeatable; POST /_proxy/faults adds more from this machine.", valueName: "spec"))
    var faults: [String] = []
    @OptionGroup var connection: ConnectionOptions

    func validate() throws {
        if let listen { guard ProxyConfiguration.listenAddress(listen) != nil else { throw ValidationError("--listen takes HOST:PORT, not “\(listen)”") } }
        if let count { guard count >= 1 else { throw ValidationError("--count must be 1 or more") } }
        if let duration { guard WatchCommand.seconds(duration) != nil else { throw ValidationError("--for takes 90s, 5m, 1h or a number of seconds, not “\(duration)”") } }
        _ = try ServerFaults.parse(faults)
        if let interval {
            guard watch else { throw ValidationError("--interval goes with --watch") }
            guard interval >= 0.2, interval <= 3600 else { throw ValidationError("--interval takes seconds from 0.2 to 3600") }
        }
    }

    func run() async throws {
        let config = try connection.loadConfig()
        let settings = try connection.settings(config: config, watchInterval: interval)
        let logger = try connection.makeLogger(label: "reiterate.proxy")
        if watch { return try await runWatching(settings: settings, logger: logger) }
        let setup: ProxySetup
        do {
            setup = try ProxySetup.make(settings: settings, listen: listen, environment: connection.environment, faults: ServerFaults.parse(faults))
        } catch {
            throw fail(error)
        }
        // The last 100 in memory; with --har, older ones spill to the state folder until the file is written.
        let log = ExchangeLog(capacity: 100, spillFile: connection.harFile.flatMap { _ in SessionSpill.path(environment: connection.environment) })
        let pipeline = ExchangePipeline.standard(exchanges: log, contract: try connection.contract(settings), pins: connection.pins(settings), logger: logger,
                                                 extra: [SessionJournal.observer(base: settings.baseURL)])
        // Bounded: a flood of refusals from a peer, or a stalled stdout, holds at most this many lines.
        let (events, sink) = AsyncStream<ProxyEvent>.makeStream(bufferingPolicy: .bufferingNewest(10_000))
        let server: ProxyServer
        do {
            server = try await ProxyServer.start(configuration: setup.configuration, ca: setup.ca, transport: setup.transport, pipeline: pipeline,
                                                 events: { sink.yield($0) })
        } catch let error as ProxyStartError {
            try? await setup.transport.shutdown()
            Terminal.err("error: \(Sanitizer.line(error.description))\n")
            throw ExitCode(ExitStatus.unavailable.rawValue)
        }
        for line in setup.notes(listening: server.address) { Terminal.err("note: \(line)\n") }
        let started = Date()
        let printer = ProxyPrinter(json: json, count: count, lines: .standard)
        let why = await ProxyRunLoop.run(events: events, seconds: duration.flatMap(WatchCommand.seconds)) { printer.write($0) }
        await server.stop()
        sink.finish()
        try? await setup.transport.shutdown()
        if let harFile = connection.harFile { await ProxyHAR.write(log, to: harFile, baseURL: settings.baseURL) }
        await log.close()
        let c = server.stats.current
        let plural = { (n: Int, word: String) in "\(Wording.grouped(n)) \(word)\(n == 1 ? "" : "s")" }
        Terminal.err("note: proxy on \(server.address) for \(Wording.duration(Date().timeIntervalSince(started))): \(plural(c.exchanges, "app exchange")), "
                     + "\(plural(c.findings, "finding")), \(plural(c.errors, "error")), \(plural(c.tunnels, "tunnel")), \(Wording.grouped(c.refused)) refused"
                     + "\(c.authFailures > 0 ? " (\(plural(c.authFailures, "wrong or missing password")))" : "")\(why.map { " (\($0))" } ?? "")\n")
        if strict, c.findings > 0 { throw ExitCode(ExitStatus.dataError.rawValue) }
    }
}

/// Ends the run at a signal, a duration, or when `handle` says the count is reached.
enum ProxyRunLoop {
    /// Why it ended: "interrupted", "terminated", or nil (the count or the duration).
    static func run(events: AsyncStream<ProxyEvent>, seconds: Double?, handle: @escaping @Sendable (ProxyEvent) -> Bool) async -> String? {
        let ending = AsyncStream<String?>.makeStream()
        var sources: [any DispatchSourceSignal] = []
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            let words = sig == SIGINT ? "interrupted" : "terminated"
            source.setEventHandler { @Sendable in ending.continuation.yield(words) }
            source.resume()
            sources.append(source)
        }
        defer { sources.forEach { $0.cancel() } }
        return await withTaskGroup(of: String?.self) { group in
            group.addTask {
                for await event in events where handle(event) { return nil }
                return nil
            }
            group.addTask {
                for await why in ending.stream { return why }
                return nil
            }
            if let seconds {
                group.addTask {
                    try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
                    return nil
                }
            }
            let why = await group.next() ?? nil
            group.cancelAll()
            ending.continuation.finish()
            return why
        }
    }
}
