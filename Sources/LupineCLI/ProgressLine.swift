import Foundation

/// The text of the download progress bar: bytes, percent and bar when the length is known, rate,
/// and the time left (or, once done, the time taken). Pure, so that it is tested alone.
enum ProgressLine {
    /// One line no wider than `columns - 1` (a line that fills the last column wraps on some
    /// terminals).
    ///
    /// - Parameters:
    ///   - received: bytes of the file so far (a resumed download counts the bytes it kept).
    ///   - total: the file's length, nil when the server did not say.
    ///   - bytesPerSecond: the recent rate, nil before there is one.
    ///   - elapsed: seconds since this run started.
    ///   - finished: the download is complete: the time taken replaces the time left.
    static func render(received: Int64, total: Int64?, bytesPerSecond: Double?, elapsed: TimeInterval,
                       finished: Bool, columns: Int) -> String {
        // Fixed widths, so that the bar keeps its length while the numbers change.
        let rate = padded(bytesPerSecond.map { byteCount(Int64($0)) + "/s" } ?? "--/s", to: 10)
        let bytes = padded(byteCount(received), to: 8)
        var time: String
        if finished {
            time = "in " + duration(elapsed)
        } else if let total, let bytesPerSecond, bytesPerSecond > 0, total >= received {
            time = "ETA " + duration(Double(total - received) / bytesPerSecond)
        } else {
            time = total == nil ? duration(elapsed) : "ETA --:--"
        }
        time = padded(time, to: 8)
        guard let total, total > 0 else {
            return fit("\(bytes)  \(rate)  \(time)", columns: columns)
        }
        let fraction = min(1, max(0, Double(received) / Double(total)))
        let percent = String(format: "%3d%%", Int((fraction * 100).rounded(.down)))
        let tail = " \(bytes) / \(byteCount(total))  \(rate)  \(time)"
        let barWidth = columns - 1 - percent.count - 3 - tail.count
        guard barWidth >= 10 else { return fit(percent + tail, columns: columns) }
        let filled = Int((Double(barWidth) * fraction).rounded(.down))
        let bar: String
        if filled >= barWidth {
            bar = String(repeating: "=", count: barWidth)
        } else {
            bar = String(repeating: "=", count: filled) + ">" + String(repeating: " ", count: barWidth - filled - 1)
        }
        return "\(percent) [\(bar)]\(tail)"
    }

    private static func padded(_ text: String, to width: Int) -> String {
        String(repeating: " ", count: max(0, width - text.count)) + text
    }

    private static func fit(_ line: String, columns: Int) -> String {
        String(line.prefix(max(1, columns - 1)))
    }

    /// "512 B", "1.5 KiB", "12.3 MiB", "1.02 GiB".
    static func byteCount(_ bytes: Int64) -> String {
        let units = ["KiB", "MiB", "GiB", "TiB"]
        guard bytes >= 1024 else { return "\(bytes) B" }
        var value = Double(bytes) / 1024
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return String(format: value >= 100 ? "%.0f" : value >= 10 ? "%.1f" : "%.2f", value) + " " + units[unit]
    }

    /// "0:07", "12:34", "1:02:03".
    static func duration(_ seconds: TimeInterval) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "--:--" }
        let whole = Int(seconds.rounded())
        let (hours, minutes, rest) = (whole / 3600, whole / 60 % 60, whole % 60)
        return hours > 0 ? String(format: "%d:%02d:%02d", hours, minutes, rest) : String(format: "%d:%02d", minutes, rest)
    }
}
