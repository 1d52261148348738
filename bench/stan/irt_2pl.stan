// The 2PL as bfhpo simulates it (models/simulators/irt_models.cpp): P(y = 1) =
// inv_logit(exp(log_a_j) * (theta_p - b_j)), theta_p ~ N(0, 1), log_a_j ~
// N(log_a_mean, log_a_sd), b_j ~ N(b_mean, b_sd). Only observed cells are
// given (long format; Stan 2.21 syntax, as Debian 12's rstan), so missing cells are ignored as bfhpo's mask ignores them.
data {
  int<lower=1> P;
  int<lower=1> J;
  int<lower=1> N;
  int<lower=1, upper=P> person[N];
  int<lower=1, upper=J> item[N];
  int<lower=0, upper=1> y[N];
  real log_a_mean;
  real<lower=0> log_a_sd;
  real b_mean;
  real<lower=0> b_sd;
}
parameters {
  vector[P] theta;
  vector[J] log_a;
  vector[J] b;
}
model {
  theta ~ normal(0, 1);
  log_a ~ normal(log_a_mean, log_a_sd);
  b ~ normal(b_mean, b_sd);
  y ~ bernoulli_logit(exp(log_a[item]) .* (theta[person] - b[item]));
}
