#!/usr/bin/env python3
"""Tests of bench/chart.py: python3 bench/test_chart.py (standard library only)."""

import contextlib
import io
import math
import os
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chart  # noqa: E402

SVG = "{http://www.w3.org/2000/svg}"

EMBED = """# a comment line, then the header
group\tseries\tmetric\tvalue\tunit
weights changed\tours\ttime\t3.09\ts
weights changed\tpeer\ttime\t23.84\ts
main.rs changed\tours\ttime\t1.10\ts
main.rs changed\tpeer\ttime\t22.40\ts

weights changed\tours\tpeak memory\t0.74\tGB
weights changed\tpeer\tpeak memory\t3.32\tGB
"""


class ChartTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def path(self, name):
        return os.path.join(self.dir.name, name)

    def write(self, name, text):
        with open(self.path(name), "w", encoding="utf-8") as f:
            f.write(text)
        return self.path(name)

    def run_chart(self, *args):
        """Runs main(); returns (exit status, stderr text)."""
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            status = chart.main(list(args))
        return status, err.getvalue()

    def render(self, text, *extra, name="r.tsv"):
        source = self.write(name, text)
        out = self.path("chart.svg")
        status, err = self.run_chart(source, "--title", "T <&>", "--output", out, *extra)
        self.assertEqual(status, 0, err)
        with open(out, encoding="utf-8") as f:
            svg = f.read()
        return svg, ET.fromstring(svg)

    def texts(self, root):
        return [t.text for t in root.iter(SVG + "text")]

    def bars(self, root):
        """{tooltip: height} of every bar."""
        return {
            r.find(SVG + "title").text: float(r.get("height"))
            for r in root.iter(SVG + "rect")
            if r.find(SVG + "title") is not None
        }

    def test_grouped_bars_with_labels_legend_and_one_panel_per_metric(self):
        svg, root = self.render(EMBED, "--baseline", "peer", "--subtitle", "lower is better")
        texts = self.texts(root)
        self.assertIn("T <&>", texts)  # escaped in the file, intact once parsed
        self.assertIn("lower is better", texts)
        for label in ["ours", "peer", "weights changed", "main.rs changed", "Time",
                      "Peak memory", "time (s)", "peak memory (GB)"]:
            self.assertIn(label, texts)
        # Values exactly as written (1.10 stays 1.10), ratios on the first series only.
        for label in ["3.09 s", "23.84 s", "1.10 s", "22.40 s", "0.74 GB", "3.32 GB"]:
            self.assertIn(label, texts)
        self.assertIn("0.13x", texts)  # 3.09 / 23.84
        self.assertIn("0.05x", texts)  # 1.10 / 22.40
        self.assertIn("0.22x", texts)  # 0.74 / 3.32
        self.assertEqual(sum(t.endswith("x") for t in texts if t[0].isdigit()), 3)
        # 6 bars: main.rs changed has no memory rows, so it leaves a gap there.
        bars = self.bars(root)
        self.assertEqual(len(bars), 6)
        self.assertNotIn("main.rs changed, ours: 0.74 GB", bars)

    def test_bar_heights_are_proportional_to_values_within_a_panel(self):
        _, root = self.render(EMBED)
        bars = self.bars(root)
        ratio = bars["weights changed, ours: 3.09 s"] / bars["weights changed, peer: 23.84 s"]
        self.assertAlmostEqual(ratio, 3.09 / 23.84, places=2)
        ratio = bars["weights changed, ours: 0.74 GB"] / bars["weights changed, peer: 3.32 GB"]
        self.assertAlmostEqual(ratio, 0.74 / 3.32, places=2)

    def test_without_metric_column_one_panel_per_unit_and_csv_input(self):
        text = "series,group,value,unit\nours,a,1,s\npeer,a,2,s\nours,a,5,MiB\n"
        _, root = self.render(text, name="r.csv")
        texts = self.texts(root)
        self.assertIn("s", texts)
        self.assertIn("MiB", texts)
        self.assertEqual(len(self.bars(root)), 3)

    def test_the_same_input_gives_the_same_bytes(self):
        first, _ = self.render(EMBED)
        second, _ = self.render(EMBED)
        self.assertEqual(first, second)

    def assert_fails(self, text, expected, *extra, name="r.tsv"):
        source = self.write(name, text)
        out = self.path("chart.svg")
        status, err = self.run_chart(source, "--title", "t", "--output", out, *extra)
        self.assertEqual(status, 1)
        self.assertIn(expected, err)
        self.assertTrue(err.startswith("chart.py: "), err)
        self.assertFalse(os.path.exists(out))
        self.assertEqual(sorted(os.listdir(self.dir.name)), [name])

    def test_bad_input_is_an_error_naming_file_line_and_problem(self):
        header = "group\tseries\tvalue\tunit\n"
        cases = [
            ("", "r.tsv: no header row"),
            ("# only a comment\n", "r.tsv: no header row"),
            (header, "r.tsv: a header but no data rows"),
            ("group\tseries\tvalue\n", "r.tsv:1: no `unit` column"),
            ("group,series,value,unit\n", "r.tsv:1: no `group` column"),
            ("group\tseries\tvalue\tunit\tcolour\n", "r.tsv:1: unexpected or repeated columns ['colour']"),
            ("group\tseries\tvalue\tunit\tunit\n", "r.tsv:1: unexpected or repeated columns"),
            (header + "a\tours\t1\n", "r.tsv:2: expected 4 tab-separated fields"),
            (header + "a\tours\tfast\ts\n", "r.tsv:2: value `fast` is not a number"),
            (header + "\n# c\na\tours\t-1\ts\n", "r.tsv:4: value `-1` must be a finite number >= 0"),
            (header + "a\tours\tnan\ts\n", "r.tsv:2: value `nan` must be a finite number >= 0"),
            (header + "a\tours\tinf\ts\n", "r.tsv:2: value `inf` must be a finite number >= 0"),
            (header + "a\t\t1\ts\n", "r.tsv:2: empty `series`"),
            (header + "a\tours\t1\ts\na\tours\t2\ts\n",
             "r.tsv:3: a second value for group `a`, series `ours`, s (first on line 2)"),
        ]
        for text, expected in cases:
            with self.subTest(expected=expected):
                self.assert_fails(text, expected)

    def test_an_unknown_baseline_names_the_series(self):
        self.assert_fails(EMBED, "--baseline `theirs` is not a series of the file (series: ours, peer)",
                          "--baseline", "theirs")

    def test_unreadable_input_and_missing_output_folder(self):
        status, err = self.run_chart(self.path("absent.tsv"), "--title", "t", "--output",
                                     self.path("x.svg"))
        self.assertEqual(status, 1)
        self.assertIn("absent.tsv: cannot read", err)
        source = self.write("r.tsv", EMBED)
        out = self.path("no/such/folder/x.svg")
        status, err = self.run_chart(source, "--title", "t", "--output", out)
        self.assertEqual(status, 1)
        self.assertIn("does not exist", err)
        with open(self.path("bin.tsv"), "wb") as f:
            f.write(b"group\tseries\tvalue\tunit\n\xff\n")
        status, err = self.run_chart(self.path("bin.tsv"), "--title", "t", "--output",
                                     self.path("x.svg"))
        self.assertEqual(status, 1)
        self.assertIn("bin.tsv: not UTF-8 text", err)

    def test_a_failed_run_leaves_the_previous_chart(self):
        out = self.path("chart.svg")
        with open(out, "w") as f:
            f.write("previous")
        source = self.write("bad.tsv", "group\tseries\tvalue\tunit\na\tours\tx\ts\n")
        status, _ = self.run_chart(source, "--title", "t", "--output", out)
        self.assertEqual(status, 1)
        with open(out) as f:
            self.assertEqual(f.read(), "previous")
        self.assertEqual(sorted(os.listdir(self.dir.name)), ["bad.tsv", "chart.svg"])

    def test_usage_errors_exit_2(self):
        with contextlib.redirect_stderr(io.StringIO()):
            with self.assertRaises(SystemExit) as raised:
                chart.main(["r.tsv", "--output", "x.svg"])  # no --title
        self.assertEqual(raised.exception.code, 2)

    def test_axis_maximum_is_a_round_number_above_the_largest_value(self):
        for value in [0.0, 0.245, 0.698, 1, 3.32, 9.99, 10, 23.84, 1026.8, 123456]:
            top, step = chart.nice_ceiling(value)
            with self.subTest(value=value):
                self.assertGreaterEqual(top, value)
                self.assertLessEqual(top / step, 7)
                self.assertGreaterEqual(top / step, 1)
                self.assertAlmostEqual(top / step, round(top / step))
                mantissa = step / 10 ** math.floor(math.log10(step))
                self.assertTrue(any(abs(mantissa - m) < 1e-9 for m in (1, 2, 2.5, 5)), step)


if __name__ == "__main__":
    unittest.main()
