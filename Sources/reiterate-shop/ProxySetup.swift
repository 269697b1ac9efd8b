import ArgumentParser
import Foundation
import ProxyCA
import ShopAPI
import ShopProbes
import ShopProxy
import ShopSettings
import ShopViewModels
import TerminalText

/// What the proxy runs with, made from the settings: its configuration, its CA (made on first use in
/// the state folder) and the upstream transport (the client's: `ca_file`, the upstream proxy).
struct ProxySetup {
    var configuration: ProxyConfiguration
    var ca: ProxyCA
    var transport: AsyncHTTPTransport
    /// Hosts the CA may not sign for (a CA made for other environments).
    var uncovered: [String]

    static func make(settings: ResolvedSettings, listen: String?, environment: [String: String], faults: [ProxyFault] = []) throws -> ProxySetup {
        guard let baseURL = URL(string: settings.baseURL), HostPort(url: baseURL) != nil else {
            throw CLIError(message: "the base URL \(settings.baseURL) has no host the proxy could intercept", exitCode: .config)
        }
        let listenText = listen ?? settings.proxyListen ?? "127.0.0.1:8877"
        guard let address = ProxyConfiguration.listenAddress(listenText) else {
            throw CLIError(message: "proxy_listen takes HOST:PORT, not “\(listenText)”", exitCode: .config)
        }
        var extra: [HostPort] = []
        for host in settings.proxyHosts {
            guard let named = HostPort(authority: host.contains(":") && !host.hasSuffix("]") ? host : host + ":443") else {
                throw CLIError(message: "proxy_hosts: “\(host)” is not a host name or host:port", exitCode: .config)
            }
            extra.append(named)
        }
        let password = environment["REITERATE_PROXY_PASSWORD"].flatMap { $0.isEmpty ? nil : $0 }
        var configuration = ProxyConfiguration(listen: address, password: password, baseURL: baseURL, extraHosts: extra,
                                               upstreamTimeout: .milliseconds(Int(upstreamSeconds(settings) * 1000)))
        configuration.faults = faults
        if let refusal = configuration.refusal { throw CLIError(message: refusal, exitCode: .config) }
        guard let folder = ProxyCA.defaultFolder(environment: environment) else {
            throw CLIError(message: "no folder for the proxy's CA: set XDG_STATE_HOME or HOME", exitCode: .config)
        }
        let hosts = configuration.interceptedHosts.map(\.host)
        let ca: ProxyCA
        do {
            ca = try ProxyCA.loadOrCreate(folder: folder, permitted: PermittedNames(hosts: hosts))
        } catch {
            throw CLIError(message: error.description, exitCode: .config)
        }
        let transport: AsyncHTTPTransport
        do {
            let upstream = settings.proxy.map { (host: $0.host, port: $0.port, username: $0.username, password: $0.password) }
            transport = try AsyncHTTPTransport(configuration: .init(connectTimeout: .seconds(3), caFile: settings.caFile,
                                                                    maxResponseBytes: configuration.limits.maxBodyBytes, proxy: upstream,
                                                                    maxConnectionsPerHost: 64))
        } catch let error as TransportError {
            throw CLIError(message: ErrorText.sentence(error), exitCode: .config)
        }
        return ProxySetup(configuration: configuration, ca: ca, transport: transport, uncovered: ca.uncovered(hosts))
    }

    /// How long an app's request may take upstream: the environment's `timeout` (or `--timeout`) when
    /// one is given, else 30 s (the tool's own default of 10 s is for its reads, not for an app's writes).
    static func upstreamSeconds(_ settings: ResolvedSettings) -> Double {
        settings.sources["timeout"] == "default" ? 30 : settings.timeout
    }

    /// What the tester is told at start: where it listens, what it intercepts, the CA, the setup page.
    func notes(listening: HostPort) -> [String] {
        let hosts = configuration.interceptedHosts.map(\.description).joined(separator: ", ")
        var lines = ["proxy listening on \(listening), intercepting \(hosts); other hosts pass through unread",
                     "CA SHA-256 \(ca.fingerprintSHA256): install it from http://\(listening)/ on the phone, or `reiterate-shop proxy ca`"]
        if !uncovered.isEmpty {
            lines.append("the proxy's CA may not sign for \(uncovered.joined(separator: ", ")) (its name constraints): `reiterate-shop proxy ca --renew`, then install the new CA")
        }
        return lines.map(Sanitizer.line)
    }
}

/// `reiterate-shop proxy ca`: the CA's certificate as PEM or as an iOS profile, and its fingerprint.
struct ProxyCACommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ca",
        abstract: "Write the proxy's CA certificate (PEM, or an iOS profile) and print its SHA-256 fingerprint.",
        discussion: """
            The CA is made on first use in $XDG_STATE_HOME/reiterate-shop/proxy-ca (its key 0600, never printed).
            It may sign only for the environment's hosts; --renew makes a new one (install it again).
            Without --out or --mobileconfig the PEM goes to stdout.
            """
    )

    @Option(help: "Write the certificate here as PEM.") var out: String?
    @Option(help: "Write an iOS configuration profile (.mobileconfig) here.") var mobileconfig: String?
    @Flag(help: "Make a new CA for the environment's hosts (the old one stops working once replaced on the phone).") var renew = false
    @OptionGroup var connection: ConnectionOptions

    func run() throws {
        let settings = try connection.settings()
        let environment = connection.environment
        guard let baseURL = URL(string: settings.baseURL), let base = HostPort(url: baseURL) else {
            throw fail(CLIError(message: "the base URL \(settings.baseURL) has no host", exitCode: .config))
        }
        guard let folder = ProxyCA.defaultFolder(environment: environment) else {
            throw fail(CLIError(message: "no folder for the proxy's CA: set XDG_STATE_HOME or HOME", exitCode: .config))
        }
        let hosts = [base.host] + settings.proxyHosts.map { HostPort(authority: $0.contains(":") ? $0 : $0 + ":443")?.host ?? $0 }
        let ca: ProxyCA
        do {
            ca = renew ? try ProxyCA.renew(folder: folder, permitted: PermittedNames(hosts: hosts))
                : try ProxyCA.loadOrCreate(folder: folder, permitted: PermittedNames(hosts: hosts))
        } catch {
            throw fail(CLIError(message: error.description, exitCode: .config))
        }
        do {
            if let out {
                try write(ca.certificatePEM, to: out)
                Terminal.err("note: wrote the CA certificate (PEM) to \(Sanitizer.line(out))\n")
            }
            if let mobileconfig {
                try write(ca.mobileconfig(), to: mobileconfig)
                Terminal.err("note: wrote the iOS profile to \(Sanitizer.line(mobileconfig))\n")
            }
        } catch {
            throw fail(CLIError(message: "could not write \(error): check that its folder exists and is writable", exitCode: .config))
        }
        if out == nil, mobileconfig == nil { Terminal.out(ca.certificatePEM) }
        let uncovered = ca.uncovered(hosts)
        Terminal.err("note: CA SHA-256 \(ca.fingerprintSHA256); it may sign for \((ca.permitted.dnsNames + ca.permitted.ipAddresses).joined(separator: ", "))\n")
        if !uncovered.isEmpty {
            Terminal.err("warning: it may not sign for \(uncovered.joined(separator: ", ")): run `reiterate-shop proxy ca --renew` and install the new CA\n")
        }
    }

    private func write(_ text: String, to path: String) throws {
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw CLIError(message: Sanitizer.line(path), exitCode: .config)
        }
    }
}

extension ServerFaults {
    /// `--fault` values, parsed (a bad one is a usage error naming it).
    static func parse(_ specs: [String]) throws -> [ProxyFault] {
        try specs.map { spec in
            do { return try ProxyFault.parse(spec) } catch let error as ProxyFaultError {
                throw ValidationError("--fault \(spec): \(error.description)")
            }
        }
    }
}
