use cachepart_profile::optimal::{solve, Objective, SolveOptions, Structure};
use cachepart_profile::{BwModel, MetricsTable, Mix, ModelConfig};
use std::path::Path;
fn main() {
    let n: usize = std::env::args().nth(1).unwrap().parse().unwrap();
    let o = Objective::from_name(&std::env::args().nth(2).unwrap()).unwrap();
    let t = MetricsTable::from_path(Path::new("/work/shared/data/pbbcache/metrics.csv")).unwrap();
    let idx: Vec<usize> = (0..n).map(|i| (i * 7 + 3) % t.apps().len()).collect();
    let mix = Mix::from_table(&t, &idx);
    let cfg = ModelConfig { bw_model: BwModel::Simple, max_bw_mbps: Some(35000.0) };
    let s = solve(&mix, &cfg, Structure::Clustering, o, &SolveOptions::default()).unwrap();
    let ev = cachepart_profile::evaluate(&mix, &s.plan, &cfg).unwrap();
    println!("n={n} {} {:.3}s nodes={} proven={} plan={} stp={:.3} unf={:.4}", o.name(), s.seconds, s.explored_nodes, s.proven_optimal, s.plan, ev.metrics.stp, ev.metrics.unfairness);
}
