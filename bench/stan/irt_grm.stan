// The graded response model as bfhpo simulates it: P(y >= k) =
// inv_logit(a_j * (theta_p - b_jk)), y in 0..K-1 (given here as 1..K),
// theta_p ~ N(0, 1), log_a_j ~ N(log_a_mean, log_a_sd), and the thresholds
// b_j1 < ... < b_j(K-1) the sorted draws of K-1 independent
// N(threshold_mean, threshold_sd): independent normals on an ordered vector
// are that distribution (up to the constant (K-1)!). Stan's
// ordered_logistic(eta, c) has P(y >= k + 1) = inv_logit(eta - c_k): eta =
// a_j theta_p and c = a_j b_j, ordered because a_j > 0. Stan 2.21 syntax (Debian 12's rstan).
data {
  int<lower=1> P;
  int<lower=1> J;
  int<lower=2> K;
  int<lower=1> N;
  int<lower=1, upper=P> person[N];
  int<lower=1, upper=J> item[N];
  int<lower=1, upper=K> y[N];
  real log_a_mean;
  real<lower=0> log_a_sd;
  real threshold_mean;
  real<lower=0> threshold_sd;
}
parameters {
  vector[P] theta;
  vector[J] log_a;
  ordered[K - 1] b[J];
}
model {
  theta ~ normal(0, 1);
  log_a ~ normal(log_a_mean, log_a_sd);
  for (j in 1:J) b[j] ~ normal(threshold_mean, threshold_sd);
  for (n in 1:N)
    y[n] ~ ordered_logistic(exp(log_a[item[n]]) * theta[person[n]], exp(log_a[item[n]]) * b[item[n]]);
}
