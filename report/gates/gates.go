// Package gates decides whether a run passes its CI thresholds: it parses
// threshold expressions, evaluates them against a run's report.Summary (and
// a baseline run's), and renders the verdicts as text or JUnit XML.
//
// An expression is
//
//	<metric> <op> <value>               client.ttft.p99 < 500ms
//	<metric> <op> baseline              client.requests.failed <= baseline
//	<metric> <op> baseline * <factor>   client.ttft.p99 < baseline * 1.10
//	<metric> <op> baseline ± <value>    client.requests.failed <= baseline + 2
//	<metric> regression <op> <pct>%     client.ttft.p99 regression < 10%
//
// with op one of < <= > >= == != (a regression takes < or <=; a true/false
// metric == or !=). Durations need a unit (us, ms, s); fractions are plain
// (0.01) or percentages (1%); counts and rates are plain numbers; true and
// false go with true/false metrics. A factor is plain (1.1) or a percentage
// (110%).
//
// Metric names follow summary.json (docs/summary-schema.md), without unit
// suffixes; Metrics lists them all with their unit and better direction:
//
//	client.requests.{sent,ok,failed}  client.errors.<class>  client.error_rate
//	client.tokens.{prompt,output,cached}
//	client.throughput.{requests_per_s,output_tokens_per_s,total_tokens_per_s}
//	client.{ttft,itl,tpot,e2e}.{n,mean,p50,p90,p95,p99,max}
//	server.{ttft,itl,tpot,e2e,queue,prefill,decode,inference}.{n,mean,p50,p90,p99}
//	client.<latency>.pNN and server.<histogram>.pNN for every pNN of the
//	run's report.percentiles (client.ttft.p99.9, server.e2e.p75)
//	server.counters.<counter>  server.gauges.<gauge>.{mean,max,last}
//	health.valid  health.problems  health.{schedule_lag,connect,send_delay}.{n,mean,p50,...,max}
//	health.{retries,dropped_arrivals,late_arrivals,scrape_ok,scrape_failures,partial_lines}
//	health.client.{cpu_utilization,sched_latency_p99,throttled,saturated,gc_cycles}
//	client.goodput.{requests_per_s,fraction,good}
//	client.<endpoint>.* (decision 1403)  client.tokens.images.{images,tokens,per_image}
//	sessions.{count,min_hit_rate,overall_hit_rate}  sessions.hit_rate.{n,mean,p50,...,max}
//	findings.{info,warn,fail}  run.duration  sweep.capacity  sweep.goodput_peak
//
// Any client.* or server.* metric also reads one phase alone, a sweep point
// say, as phase[NAME].<metric>: phase[rate-8].client.ttft.p99 < 1s.
//
// A server quantile is the bucket estimate's value; one that fell above the
// histogram's top bucket decides a gate only when its lower bound already
// does. A metric the run lacks makes the gate an Error, never a pass.
//
// A regression is how much worse the run is than the baseline, as a
// fraction of the baseline: cur/base − 1 for metrics where lower is better,
// 1 − cur/base where higher is. Given both runs' raw records, a regression
// gate on a latency statistic (mean or quantile of TTFT, ITL, TPOT, E2E,
// schedule lag, connect, send delay) computes a seeded bootstrap confidence
// interval of the regression, resampling requests, and fails only when the
// whole interval lies beyond the allowed regression (docs/decisions/0701).
package gates
