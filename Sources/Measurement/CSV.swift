//! RFC 4180 CSV text, built by hand so that every byte is under our control.
//!
//! - Lines end with CRLF, including the last one.
//! - A field is quoted when it contains a comma, a double quote, CR or LF; a double quote inside
//!   a quoted field is doubled. Other fields are written as they are.
//! - Integers are plain decimal. Reals have exactly six decimals (`CSV.real(_:)`), computed
//!   without locale or `printf`, so the same `Double` always gives the same bytes.

/// RFC 4180 formatting helpers.
public enum CSV {
    /// The line terminator, CRLF.
    public static let lineEnd = "\r\n"

    /// `field`, quoted if it contains a comma, a double quote, CR or LF.
    public static func field(_ field: String) -> String {
        let needsQuotes = field.utf8.contains { byte in
            byte == UInt8(ascii: ",") || byte == UInt8(ascii: "\"")
                || byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\n")
        }
        guard needsQuotes else { return field }
        var quoted = "\""
        quoted.reserveCapacity(field.utf8.count + 4)
        for character in field {
            if character == "\"" { quoted.append("\"\"") } else { quoted.append(character) }
        }
        quoted.append("\"")
        return quoted
    }

    /// One record: the fields quoted as needed, joined by commas, ended by CRLF.
    public static func line(_ fields: [String]) -> String {
        fields.map(field).joined(separator: ",") + lineEnd
    }

    /// `value` with exactly six decimals, e.g. `1.5` → `1.500000`, `-0.0000004` → `0.000000`.
    ///
    /// Rounds half away from zero on the product `fraction × 10⁶` (within one ulp of C's
    /// `%.6f`, which rounds the exact binary value). A result that rounds to zero is written
    /// without a minus sign. Magnitudes of 2⁶³ and above, which have no fractional part, are
    /// written in Swift's shortest round-trip form (`1e+20`), still locale-free.
    /// NaN is `nan`, infinities are `inf` and `-inf`.
    public static func real(_ value: Double) -> String {
        if value.isNaN { return "nan" }
        if value.isInfinite { return value < 0 ? "-inf" : "inf" }
        let magnitude = value.magnitude
        guard magnitude < 9.223_372_036_854_775_807e18 else { return value.description }
        var whole = UInt64(magnitude.rounded(.towardZero))
        // Exact: subtracting the integer part of a Double is exact.
        let fraction = magnitude - magnitude.rounded(.towardZero)
        var micros = UInt64((fraction * 1_000_000).rounded(.toNearestOrAwayFromZero))
        if micros == 1_000_000 {
            micros = 0
            whole += 1
        }
        let negative = value < 0 && (whole != 0 || micros != 0)
        let microsText = String(micros)
        let padding = String(repeating: "0", count: 6 - microsText.utf8.count)
        return (negative ? "-" : "") + String(whole) + "." + padding + microsText
    }

    /// The records of RFC 4180 text (CRLF or LF line ends; quoted fields may hold commas,
    /// doubled quotes and line ends), or nil when a quoted field is not closed or a closing
    /// quote is followed by something other than a comma or a line end.
    public static func records(_ text: String) -> [[String]]? {
        var records: [[String]] = []
        var record: [String] = []
        var field = ""
        var iterator = text.makeIterator()
        var pending = iterator.next()
        while let character = pending {
            pending = iterator.next()
            switch character {
            case "\"" where field.isEmpty:
                // A quoted field: up to the quote not doubled, then a comma or a line end.
                var closed = false
                while let inner = pending {
                    pending = iterator.next()
                    if inner != "\"" {
                        field.append(inner)
                    } else if pending == "\"" {
                        field.append("\"")
                        pending = iterator.next()
                    } else {
                        closed = true
                        break
                    }
                }
                guard closed,
                    pending == nil || pending == "," || pending == "\r\n"
                        || pending == "\n"
                else { return nil }
            case ",":
                record.append(field)
                field = ""
            case "\r\n", "\n":
                record.append(field)
                records.append(record)
                (record, field) = ([], "")
            default:
                field.append(character)
            }
        }
        if !field.isEmpty || !record.isEmpty {
            record.append(field)
            records.append(record)
        }
        return records
    }

    /// The CSV text of a metric value: decimal for integers, `real(_:)` for reals.
    public static func value(_ value: MetricValue) -> String {
        switch value {
        case .integer(let integer): String(integer)
        case .real(let number): real(number)
        }
    }
}
