import FuzzReplay
import ShopSettings

/// libFuzzer target (`make fuzz`) for the config reader: any text either reads or is one
/// `file:line: key: message` error line — never a crash, never a line break in the message. Without
/// `-D FUZZING` it replays the files it is given.
func check(_ bytes: [UInt8]) {
    let text = String(decoding: bytes, as: UTF8.self)
    do {
        let config = try ConfigFile.parse(text, path: "config.toml")
        for (name, env) in config.environments { precondition(env.name == name, "an environment lost its name") }
    } catch {
        precondition(!error.description.contains("\n"), "an error message spans lines")
        precondition(error.description.hasPrefix("config.toml"), "an error does not name its file")
    }
}

#if FUZZING
@_cdecl("fuzz_config_main")
func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    FuzzDriver.run(argc, argv) { data, size in
        check(FuzzDriver.bytes(data, size))
        return 0
    }
}
#else
@main struct Replay {
    static func main() { FuzzReplay.run(check) }
}
#endif
