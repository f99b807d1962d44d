// Host tests of streaming mode (PROTOCOL.md section 8): the sample timer's interrupt is modelled by
// Rig::at() calling Core::sample() at every sample instant on the grid before the main loop's pass,
// so every case below is exact in virtual time. Part of build/host/host_test (make host-test).
#include <cstdlib>
#include <string>
#include <vector>

#include "host_support.h"

namespace {

using namespace ht;

// A session in streaming mode at `hz`; returns the next host seq.
uint16_t streaming(Rig& r, uint16_t hz) {
  uint16_t s = r.session();
  r.send("R " + str(s) + " " + str(hz));
  checkEq(shape(r.one("R")), "A " + str(s), "R answered");
  return (uint16_t)(s + 1);
}

std::string countsOf(const std::string& t) { return tok(t, 4) + " " + tok(t, 5); }

void testSampleTimerPlan() {
  g_test = "sample timer plan";
  static const uint32_t kPrescaler[8] = {0, 1, 8, 32, 64, 128, 256, 1024};
  double worst = 0;
  int bad = 0;
  for (uint32_t hz = 10; hz <= 1000; ++hz) {
    const tl::SampleTimer p = tl::planSampleTimer((uint16_t)hz, 16000000UL);
    const bool valid = p.cs >= 1 && p.cs <= 7 && p.divider >= 1 && p.top >= 1 &&
                       p.periodCycles == kPrescaler[p.cs] * (p.top + 1UL) * p.divider;
    if (!valid) ++bad;
    const double err = std::abs((double)p.periodCycles - 16e6 / hz) / (16e6 / hz);
    if (err > worst) worst = err;
  }
  checkEq(bad, 0, "every plan for 10..1000 Hz is a valid Timer2 setting");
  check(worst < 3e-3, "period within 0.3% of 1/hz for every rate, worst " + str((long long)(worst * 1e6)) + " ppm");
  const uint16_t exact[] = {1000, 800, 500, 400, 250, 200, 125, 100, 50, 10};
  for (size_t i = 0; i < sizeof exact / sizeof exact[0]; ++i) {
    const tl::SampleTimer p = tl::planSampleTimer(exact[i], 16000000UL);
    checkEq(p.periodCycles, 16000000UL / exact[i], str(exact[i]) + " Hz is exact");
  }
  const tl::SampleTimer k = tl::planSampleTimer(1000, 16000000UL);
  check(k.divider == 1 && k.cs == 5 && k.top == 124, "1 kHz: /128, OCR2A 124, one interrupt per sample");
  checkEq(tl::planSampleTimer(0, 16000000UL).periodCycles, 0UL, "0 Hz: no plan");
}

void testGrid() {
  g_test = "streaming: the timer's grid";
  Rig r(5000);
  uint16_t s = r.session();
  const uint32_t tR = r.now;
  r.send("R " + str(s) + " 500");
  r.one("R");
  check(r.hal.sampling && r.hal.plan.periodCycles == 32000, "R 500 starts the timer at 2 ms");
  r.advance(20000, 333);  // loop passes at an unrelated pace: the T times stay on the grid
  std::vector<std::string> f = r.frames();
  checkEq((int)f.size(), 10, "10 samples in 20 ms");
  bool grid = true;
  for (size_t i = 0; i < f.size(); ++i) grid = grid && std::strtoul(tok(f[i], 3).c_str(), 0, 10) == tR + 2000 * (i + 1);
  check(grid, "t_k = t_0 + k P, whatever the main loop does");
  checkEq(tok(f[0], 2), "-", "no command applied yet: ack -");
  r.advance(5000, 700);
  r.frames();
  const uint32_t t2 = r.now;
  r.send("R " + str(s + 1) + " 500");  // a new R restarts the grid
  r.one("R again");
  checkEq(r.hal.timerStarts, 2u, "the timer restarted");
  r.advance(4000, 1000);
  f = r.frames();
  check(f.size() == 2 && std::strtoul(tok(f[0], 3).c_str(), 0, 10) == t2 + 2000, "the new grid starts at the R");
  // The counts and the time are those latched at the instant, not when the main loop formats the T.
  r.hal.counts[0] = 10;
  r.hal.counts[1] = -10;
  const uint32_t ts = r.hal.nextSampleUs();
  ++r.hal.fired;
  r.core.sample(ts);
  r.hal.counts[0] = 99;
  r.core.tick(ts + 300);
  const std::string t = r.one("latched");
  checkEq(countsOf(t) + " " + tok(t, 3), "10 -10 " + str(ts), "T carries the latched counts and time");
  check(!r.hal.badNesting, "no sample while masked");
}

void testPendingAndAck() {
  g_test = "streaming: pending command and ack";
  Rig r;
  uint16_t s = streaming(r, 1000);
  r.send("M " + str(s) + " 100 100");
  r.send("M " + str(s + 1) + " 200 -200");  // replaces the pending one before the sample
  checkEq((int)r.frames().size(), 0, "an M in streaming mode has no answer of its own");
  const size_t logBefore = r.hal.log.size();
  check(r.hal.duty[0] == 0 && r.hal.duty[1] == 0, "nothing applied on arrival");
  r.nextSample();
  std::string t = r.one("T after the sample");
  checkEq(tok(t, 2), str(s + 1), "the T acks the applied (newest) command");
  check(r.hal.duty[0] == 200 && r.hal.duty[1] == -200, "the newest M drives the motors");
  bool olderApplied = false;
  for (size_t k = logBefore; k < r.hal.log.size(); ++k) olderApplied = olderApplied || r.hal.log[k].second == 100;
  check(!olderApplied, "the replaced M was never applied");
  // No new command: the board holds the last one and the ack stays.
  r.nextSample();
  t = r.one("T, no new M");
  checkEq(tok(t, 2), str(s + 1), "ack holds");
  checkEq(r.hal.duty[0], 200, "duty holds");
  checkEq(flagsOf(t), "01", "no flags but EN");
  // An M while disabled is refused at once and never becomes pending.
  r.send("N " + str(s + 2) + " 0");
  r.one("N 0");
  r.send("M " + str(s + 3) + " 300 300");
  checkEq(shape(r.one("M disabled")), "E " + str(s + 3) + " DISABLED", "M while disabled");
  r.send("N " + str(s + 4) + " 1");
  r.one("N 1");
  r.nextSample();
  t = r.one("T after N 1");
  check(r.hal.duty[0] == 0 && tok(t, 2) == str(s + 1), "nothing applied: the refused M was not pending");
}

void testLateAnswer() {
  g_test = "streaming: a late answer";
  Rig r;
  uint16_t s = streaming(r, 1000);
  r.send("M " + str(s) + " 50 50");
  r.nextSample();
  r.frames();
  const uint32_t tk = r.nextSample();  // sample k: the host should answer before t_k + 1 ms
  r.frames();
  r.nextSample();  // t_(k+1) passes without an answer
  std::string t = r.one("T(k+1)");
  checkEq(tok(t, 2), str(s), "T(k+1) still acks the older command: the host counts its answer late");
  r.at(tk + 1500);  // the answer to T(k) arrives 1.5 ms after T(k)
  const size_t before = r.hal.log.size();
  r.send("M " + str(s + 1) + " 70 70");
  checkEq(r.hal.log.size(), before, "a late M does not touch the outputs on arrival");
  const uint32_t tApplied = r.nextSample();
  t = r.one("T(k+2)");
  checkEq(tok(t, 2), str(s + 1), "applied at the first sample after it arrived");
  checkEq(r.hal.duty[0], 70, "duty");
  checkEq(tApplied - tk, 2000u, "that is sample k+2");
}

void testStopAndEnableDropPending() {
  g_test = "streaming: S and N 1 drop the pending command";
  Rig r;
  uint16_t s = streaming(r, 1000);
  r.send("M " + str(s) + " 400 400");
  r.nextSample();
  r.frames();
  r.send("M " + str(s + 1) + " 600 600");  // pending
  r.send("S " + str(s + 2));
  checkEq(shape(r.one("S")), "A " + str(s + 2), "S answered at once");
  check(r.hal.duty[0] == 0 && r.hal.duty[1] == 0, "S zeroes the outputs at once");
  r.send("N " + str(s + 3) + " 1");
  r.one("N 1");
  r.nextSample();
  std::string t = r.one("T after S, N 1");
  check(r.hal.duty[0] == 0, "the pending M died with the S");
  checkEq(tok(t, 2), str(s), "the ack is still the last applied command");
  r.send("M " + str(s + 4) + " 500 500");
  r.send("N " + str(s + 5) + " 1");  // N 1 while enabled: zero duty, pending dropped
  r.one("N 1 again");
  r.nextSample();
  t = r.one("T after N 1");
  check(r.hal.duty[0] == 0 && tok(t, 2) == str(s), "N 1 drops the pending M too");
  r.send("M " + str(s + 6) + " 500 500");
  r.send("H 9 1");  // a new session: sync mode, nothing pending
  r.one("H");
  check(!r.hal.sampling && r.core.rateHz() == 0, "H stops the sample timer");
  r.send("N 10 1");
  r.one("N");
  r.send("M 11 5 5");
  checkEq(tok(r.one("sync M"), 2), "11", "after H, an M is answered at once (sync mode)");
  checkEq(r.hal.duty[0], 5, "and applied at once");
}

void testWatchdogStreaming() {
  g_test = "streaming: watchdog";
  Rig r;
  uint16_t s = streaming(r, 1000);
  r.send("M " + str(s) + " 300 -300");
  const uint32_t fed = r.now;
  r.nextSample();
  r.frames();
  r.advance(fed + 100000 - r.now, 250);  // samples go on; the host says nothing
  std::vector<std::string> f = r.frames();
  check(r.core.enabled() && r.hal.duty[0] == 300, "still driving at exactly the timeout");
  checkEq((int)f.size(), 99, "a T per sample meanwhile");
  r.at(fed + 100001);
  check(r.hal.duty[0] == 0 && r.hal.duty[1] == 0 && !r.core.enabled(), "cut after the timeout");
  f = r.frames();
  check(!f.empty() && f[0].find(" - WDT no command for 100 ms") != std::string::npos, "E WDT");
  checkEq((int)f.size(), 1, "no extra T in streaming mode: the next sample brings the flags");
  r.nextSample();
  const std::string t = r.one("T after the cut");
  checkEq(flagsOf(t), "02", "WDT set, EN clear");
  checkEq(tok(t, 2), str(s), "the T acks the last applied command");
  // A pending command dies with the watchdog: a short timeout and a slow grid.
  Rig q;
  uint16_t u = q.session();
  q.send("W " + str(u) + " 10");
  q.send("R " + str(u + 1) + " 10");
  q.frames();
  q.send("M " + str(u + 2) + " 800 800");
  q.advance(11000, 100);  // the watchdog fires 10 ms later, 89 ms before the next sample
  check(!q.core.enabled(), "cut before the sample");
  q.send("N " + str(u + 3) + " 1");
  q.frames();
  q.nextSample();  // 90 ms later: the 10 ms watchdog has cut again meanwhile (E WDT), then the T
  f = q.frames();
  check(q.hal.duty[0] == 0 && !f.empty() && tok(f.back(), 0) == "T" && tok(f.back(), 2) == "-",
        "the pending M was not applied after the cut");
  check(!r.hal.badNesting && !q.hal.badNesting, "critical sections balanced");
}

void testTxDropStreaming() {
  g_test = "streaming: TXDROP";
  Rig r;
  uint16_t s = streaming(r, 1000);
  r.send("M " + str(s) + " 1 1");
  r.nextSample();
  std::string t0 = r.one("first T");
  r.hal.txRoom = 0;  // the UART is stuck: T frames fill the queue, then are dropped
  r.advance(20000, 1000);
  r.hal.txRoom = (size_t)1 << 30;
  r.at(r.now + 1);
  std::vector<std::string> f = r.frames();
  check(f.size() > 2 && f.size() < 20, "some of the 20 T frames queued, the rest dropped: " + str((long long)f.size()));
  r.nextSample();
  const std::string t = r.one("T after the drops");
  checkEq(flagsOf(t), "81", "TXDROP reported, sampling never waited");
  const long long gap = std::atoll(tok(t, 1).c_str()) - std::atoll(tok(t0, 1).c_str()) - 1 - (long long)f.size();
  checkEq(gap, 20 - (long long)f.size(), "the dropped T frames used up their sequence numbers");
  r.nextSample();
  checkEq(flagsOf(r.one("next")), "01", "TXDROP cleared");
}

}  // namespace

void runStreamTests() {
  testSampleTimerPlan();
  testGrid();
  testPendingAndAck();
  testLateAnswer();
  testStopAndEnableDropPending();
  testWatchdogStreaming();
  testTxDropStreaming();
}
