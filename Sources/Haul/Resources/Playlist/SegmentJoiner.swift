import Crypto
import CryptoExtras
import Foundation

/// Makes one playable file from downloaded segments (`JoinSpec`): MPEG-TS segments
/// concatenate, and fMP4 is its initialization section followed by the fragments. Segments
/// encrypted with AES-128 are decrypted on the way with their key file from the resource's own
/// directory; the key never goes anywhere else, and the joined file holds no key.
///
/// The result is written to a temporary name in the same directory and renamed over
/// `output`, so a joined file is either complete or absent, and joining again is harmless.
enum SegmentJoiner {
    static func join(_ spec: JoinSpec, in directory: URL) throws(HaulError) {
        let file = try SystemCalls.temporaryFile(in: directory.path)
        var keys: [String: SymmetricKey] = [:]
        do {
            for part in spec.parts {
                var bytes = try read(part, in: directory)
                if let keyFile = part.keyFile, let iv = part.iv {
                    let key = try keys[keyFile] ?? loadKey(keyFile, in: directory)
                    keys[keyFile] = key
                    do {
                        bytes = try AES._CBC.decrypt(bytes, using: key, iv: AES._CBC.IV(ivBytes: iv))
                    } catch {
                        throw HaulError(.invalidResponse, "\(part.file) cannot be decrypted with \(keyFile): \(error)")
                    }
                }
                try file.write(bytes)
            }
        } catch {
            file.discard()
            throw HaulError.from(error, fallback: .fileSystem)
        }
        try file.commit(as: spec.output, sync: true)
    }

    /// The part's bytes: the whole file, or its byte range.
    private static func read(_ part: JoinPart, in directory: URL) throws(HaulError) -> Data {
        let path = directory.appendingPathComponent(part.file).path
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw HaulError(.fileSystem, "the segment \(part.file) is missing from \(directory.path)")
        }
        defer { try? handle.close() }
        do {
            guard let range = part.range else { return try handle.readToEnd() ?? Data() }
            try handle.seek(toOffset: UInt64(range.offset))
            let data = try handle.read(upToCount: Int(range.length)) ?? Data()
            guard data.count == Int(range.length) else {
                throw HaulError(.lengthMismatch, "\(part.file) is shorter than its byte range \(range.length)@\(range.offset)")
            }
            return data
        } catch {
            throw error as? HaulError ?? HaulError(.fileSystem, "cannot read \(path): \(error.localizedDescription)")
        }
    }

    private static func loadKey(_ name: String, in directory: URL) throws(HaulError) -> SymmetricKey {
        guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path) else {
            throw HaulError(.fileSystem, "the key \(name) is missing from \(directory.path)")
        }
        guard data.count == 16 else {
            throw HaulError(.invalidResponse, "the key \(name) has \(data.count) bytes; an AES-128 key has 16")
        }
        return SymmetricKey(data: data)
    }
}
