import Foundation

/// The fuzz targets of the readers of a client's bytes, one executable: `FUZZ_TARGET` names the
/// reader (`push-json`, the default, or `cursor-payload`). Built with `-sanitize=fuzzer,address
/// -DFUZZING`, libFuzzer feeds it inputs (see `.ci/fuzz`); built plainly, it replays the files or
/// folders it is given.
enum FuzzTarget: String {
    case pushJSON = "push-json"
    case cursorPayload = "cursor-payload"

    static let chosen: FuzzTarget = {
        let name = ProcessInfo.processInfo.environment["FUZZ_TARGET"] ?? FuzzTarget.pushJSON.rawValue
        guard let target = FuzzTarget(rawValue: name) else {
            FileHandle.standardError.write(Data("error: FUZZ_TARGET must be push-json or cursor-payload, not \(name)\n".utf8))
            exit(2)
        }
        return target
    }()

    func check(_ bytes: [UInt8]) {
        switch self {
        case .pushJSON: PushJSONCheck.check(bytes)
        case .cursorPayload: CursorPayloadCheck.check(bytes)
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func clientBytesFuzzOne(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    FuzzTarget.chosen.check(Array(UnsafeBufferPointer(start: data, count: count)))
    return 0
}

#if FUZZING
/// libFuzzer's driver (libclang_rt.fuzzer, linked by `-sanitize=fuzzer`), run from this
/// executable's own entry point, which SwiftPM names for the target.
@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt

@main
struct Fuzz {
    static func main() {
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(runFuzzerDriver(&argc, &argv) { data, count in clientBytesFuzzOne(data, count) })
    }
}
#else
/// Replays inputs: each argument a file, or a folder whose files are replayed.
@main
struct Replay {
    static func main() throws {
        var replayed = 0
        for argument in CommandLine.arguments.dropFirst() {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: argument, isDirectory: &isFolder) else {
                FileHandle.standardError.write(Data("error: no file or folder at \(argument)\n".utf8))
                exit(2)
            }
            let files = isFolder.boolValue
                ? try FileManager.default.contentsOfDirectory(atPath: argument).sorted().map { argument + "/" + $0 }
                : [argument]
            for file in files {
                FuzzTarget.chosen.check(Array(try Data(contentsOf: URL(fileURLWithPath: file))))
                replayed += 1
            }
        }
        print("client-bytes-fuzz \(FuzzTarget.chosen.rawValue): \(replayed) inputs replayed, every one as its check expects")
    }
}
#endif
