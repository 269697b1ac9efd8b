import Foundation

/// A fuzz target built without libFuzzer: it runs each file (or each file in each folder) it is given
/// through the target's check, so a crash input is replayed as a plain program (and kept as a test:
/// `make test` replays `Tests/Fuzz/corpus`). A check that fails stops the program (a precondition);
/// a path that is missing, a folder with no file in it, or no path at all is a failure too, so a
/// renamed or emptied corpus cannot pass with nothing replayed.
public enum FuzzReplay {
    public static func run(_ check: ([UInt8]) -> Void) {
        run { _, bytes in check(bytes) }
    }

    /// The same, telling the check each input's file name (a target may hold inputs to more, by name).
    public static func run(_ check: (_ name: String, _ bytes: [UInt8]) -> Void) {
        let target = CommandLine.arguments.first.map { ($0 as NSString).lastPathComponent } ?? "fuzz"
        let paths = Array(CommandLine.arguments.dropFirst())
        if paths.isEmpty { fail("\(target): no corpus given (usage: \(target) FOLDER-OR-FILE...)") }
        var files: [String] = []
        for path in paths {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
                fail("\(target): the corpus \(path) does not exist")
            }
            if isFolder.boolValue {
                let names = ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).filter { !$0.hasPrefix(".") }
                if names.isEmpty { fail("\(target): the corpus folder \(path) holds no input") }
                files += names.sorted().map { path + "/" + $0 }
            } else {
                files.append(path)
            }
        }
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else { fail("\(target): cannot read \(file)") }
            check((file as NSString).lastPathComponent, Array(data))
        }
        print("\(target): \(files.count) inputs replayed, all passed")
    }

    private static func fail(_ line: String) -> Never {
        FileHandle.standardError.write(Data(("error: " + line + "\n").utf8))
        exit(1)
    }
}

#if FUZZING
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                         _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Int32

/// libFuzzer's driver, started from the target's entry point (SwiftPM names an executable's entry
/// `<module>_main` and links `main` to it, so libFuzzer's own `main` is not used).
public enum FuzzDriver {
    public static func run(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                           _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Int32 {
        var argc = argc
        var argv = argv
        return LLVMFuzzerRunDriver(&argc, &argv, callback)
    }

    public static func bytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
        data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    }
}
#endif
