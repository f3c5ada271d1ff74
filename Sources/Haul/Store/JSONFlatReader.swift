/// Reads the flat JSON objects the store writes (`JSONText`): string and integer members, no
/// nesting. Returns nil for anything else, and the caller falls back to `JSONDecoder`.
///
/// Why: loading rows decoded the CLI's metadata and the placement intent of every row with
/// Foundation's `JSONDecoder`, tens of microseconds each; a run of the same 5,000 files again
/// (each row loaded to be recognised) spent more there than anywhere else.
enum JSONFlatReader {
    enum Member: Equatable {
        case string(String)
        case integer(String)
    }

    /// The members of a flat object, or nil when `text` is not one.
    static func object(_ text: String) -> [String: Member]? {
        var bytes = Substring(text).utf8
        var members: [String: Member] = [:]
        guard take(&bytes, 0x7B) else { return nil }  // {
        if take(&bytes, 0x7D) { return bytes.isEmpty ? members : nil }  // }
        while true {
            guard let key = string(&bytes), take(&bytes, 0x3A) else { return nil }  // :
            if bytes.first == 0x22 {
                guard let value = string(&bytes) else { return nil }
                members[key] = .string(value)
            } else {
                let digits = bytes.prefix { $0 == 0x2D || (0x30...0x39).contains($0) }
                guard !digits.isEmpty else { return nil }
                members[key] = .integer(String(Substring(digits)))
                bytes = bytes[digits.endIndex...]
            }
            if take(&bytes, 0x2C) { continue }  // ,
            guard take(&bytes, 0x7D), bytes.isEmpty else { return nil }  // }
            return members
        }
    }

    private static func take(_ bytes: inout Substring.UTF8View, _ byte: UInt8) -> Bool {
        guard bytes.first == byte else { return false }
        bytes = bytes.dropFirst()
        return true
    }

    /// A string literal; escapes other than `\"`, `\\`, `\/`, `\n`, `\r`, `\t`, `\b`, `\f` and
    /// `\uXXXX` (outside the surrogates) make it nil.
    private static func string(_ bytes: inout Substring.UTF8View) -> String? {
        guard take(&bytes, 0x22) else { return nil }
        guard let end = bytes.firstIndex(where: { $0 == 0x22 || $0 == 0x5C }) else { return nil }
        if bytes[end] == 0x22 {
            let value = String(Substring(bytes[..<end]))
            bytes = bytes[bytes.index(after: end)...]
            return value
        }
        var out: [UInt8] = []
        var rest = bytes
        while let byte = rest.first {
            rest = rest.dropFirst()
            switch byte {
            case 0x22:
                bytes = rest
                return String(decoding: out, as: UTF8.self)
            case 0x5C:
                guard let escaped = rest.first else { return nil }
                rest = rest.dropFirst()
                switch escaped {
                case 0x22, 0x5C, 0x2F: out.append(escaped)
                case 0x6E: out.append(0x0A)
                case 0x72: out.append(0x0D)
                case 0x74: out.append(0x09)
                case 0x62: out.append(0x08)
                case 0x66: out.append(0x0C)
                case 0x75:
                    guard rest.count >= 4, let value = UInt32(String(Substring(rest.prefix(4))), radix: 16),
                          let scalar = Unicode.Scalar(value) else { return nil }
                    out.append(contentsOf: String(Character(scalar)).utf8)
                    rest = rest.dropFirst(4)
                default: return nil
                }
            default:
                out.append(byte)
            }
        }
        return nil
    }
}

extension PlacementIntent {
    /// Reads `jsonText` back, or nil when `text` is not what it writes.
    init?(jsonText text: String) {
        guard let members = JSONFlatReader.object(text), members.count == 6,
              case .string(let directory)? = members["directory"], case .string(let name)? = members["name"],
              case .string(let policyText)? = members["policy"], let policy = ConflictPolicy(rawValue: policyText),
              case .integer(let device)? = members["device"], let deviceValue = UInt64(device),
              case .integer(let inode)? = members["inode"], let inodeValue = UInt64(inode),
              case .integer(let length)? = members["length"], let lengthValue = Int64(length)
        else { return nil }
        self.init(directory: directory, name: name, policy: policy, device: deviceValue, inode: inodeValue, length: lengthValue)
    }
}
