import ArchivistStore
import Foundation

/// The axes of a chart: a value axis from 0 to a round maximum in round steps, labelled in
/// percent or in counts, and which spans of the time axis get a label.
///
/// The terminal chart and the SVG share it, so both show the same ticks.
struct ChartScale: Sendable, Equatable {
    /// The top of the value axis (a whole number of steps).
    let maximum: Double
    /// The distance between ticks: 1, 2, 2.5 or 5 times a power of ten (a whole number for counts).
    let step: Double
    /// Whether values are shares (labelled `12.5%`) rather than counts (`1,200`).
    let isPercent: Bool
    /// The decimals the percent labels need to tell every tick apart.
    let decimals: Int

    /// A scale whose top is at least `largest`, in about `intervals` steps.
    init(largest: Double, intervals: Int, percent: Bool) {
        let largest = largest > 0 ? largest : (percent ? 0.01 : 1)
        let raw = largest / Double(max(1, intervals))
        let magnitude = pow(10, (log10(raw)).rounded(.down))
        let residual = raw / magnitude
        var step = magnitude * ([1, 2, 2.5, 5, 10].first { $0 >= residual - 1e-9 } ?? 10)
        if !percent { step = max(1, step.rounded(.up)) }
        self.step = step
        self.maximum = step * (largest / step - 1e-9).rounded(.up)
        self.isPercent = percent
        var decimals = 0
        if percent {
            let ticks = Self.multiples(of: step, upTo: maximum)
            while decimals < 6 {
                let scale = pow(10, Double(decimals))
                if ticks.allSatisfy({ abs(($0 * 100 * scale).rounded() - $0 * 100 * scale) < 1e-6 }) { break }
                decimals += 1
            }
        }
        self.decimals = decimals
    }

    /// The tick values, 0 first.
    var ticks: [Double] { Self.multiples(of: step, upTo: maximum) }

    /// 0, step, 2 steps, ... up to `top`.
    static func multiples(of step: Double, upTo top: Double) -> [Double] {
        var values: [Double] = []
        var k = 0.0
        while k * step <= top * (1 + 1e-9) {
            values.append(k * step)
            k += 1
        }
        return values
    }

    /// A value as the axis shows it: `12.5%`, `1,200`.
    func label(_ value: Double) -> String {
        if isPercent { return Self.decimal(value * 100, decimals: decimals) + "%" }
        return Self.grouped(Int(value.rounded()))
    }

    /// `value` with `decimals` digits after the point: `12.50`.
    static func decimal(_ value: Double, decimals: Int) -> String {
        let scale = pow(10, Double(decimals))
        let scaled = Int64((abs(value) * scale).rounded())
        let sign = value < 0 && scaled != 0 ? "-" : ""
        let whole = String(scaled / Int64(scale))
        guard decimals > 0 else { return sign + whole }
        let fraction = String(scaled % Int64(scale))
        return sign + whole + "." + String(repeating: "0", count: decimals - fraction.count) + fraction
    }

    /// A whole number with commas between thousands: `1,234,567`.
    static func grouped(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(digit)
        }
        return (value < 0 ? "-" : "") + out
    }

    /// The spans that get a label on a time axis with room for `room` labels: every `k`th, `k`
    /// the smallest round step that fits, yearly ones on years divisible by it (1990, 2000) and
    /// the others counted from the first span. Always at least the first span.
    static func labelledSpans(_ starts: [Int64], bucket: TimeBucket, room: Int) -> [Int] {
        guard !starts.isEmpty else { return [] }
        let needed = max(1, Int((Double(starts.count) / Double(max(1, room))).rounded(.up)))
        let steps: [Int]
        switch bucket {
        case .year: steps = [1, 2, 5, 10, 20, 25, 50, 100, 200, 500, 1000]
        case .month: steps = [1, 2, 3, 6, 12, 24, 60, 120, 240, 600, 1200]
        case .week: steps = [1, 2, 4, 13, 26, 52, 104, 260, 520, 1040, 2600]
        case .day: steps = [1, 2, 7, 14, 28, 91, 182, 365, 730, 1826, 3652, 7305, 18262]
        }
        let step = steps.first { $0 >= needed } ?? needed
        if bucket == .year {
            let years = starts.map { Int(bucket.label($0)) ?? 0 }
            let aligned = years.indices.filter { years[$0] % step == 0 }
            if !aligned.isEmpty && aligned.count <= room { return aligned }
        }
        return Array(stride(from: 0, to: starts.count, by: step))
    }
}
