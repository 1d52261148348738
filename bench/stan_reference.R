#!/usr/bin/env Rscript
# The reference posterior for bfhpo's real-data benchmark: the same IRT model
# with the same priors as a bfhpo study, fitted by rstan's NUTS.
#
#   Rscript bench/stan_reference.R RESPONSES.csv MODEL OUT.csv [CHAINS 4] [ITER 2000] [--persons-out PERSONS.csv]
#
# RESPONSES.csv: what `bfhpo infer` reads (a header of item names, an optional
# id column named id/person/person_id/respondent, empty or NA = missing).
# MODEL: 2pl or grm (categories 0..K-1, K from the data). Priors: bfhpo's
# defaults (log a ~ N(0, 0.5), b and thresholds ~ N(0, 1)), or the
# environment's LOG_A_MEAN, LOG_A_SD, B_MEAN, B_SD to match a study's.
# OUT.csv: one row per item parameter, as `bfhpo infer --format csv` writes
# (item, parameter, mean, sd, q2.5, q50, q97.5) plus rhat, ess_bulk and the
# sampling seconds; the run fails unless every item parameter has R-hat <=
# 1.01 and bulk ESS >= 400. PERSONS.csv (optional): each person's ability
# posterior in the file's row order, as `bfhpo infer --persons-out` writes
# it (person: the id column, else the row number; theta_mean, theta_sd,
# theta_q2.5, theta_q50, theta_q97.5) plus rhat and ess_bulk. Never part of the build or the tests: R and rstan
# (Debian's r-cran-rstan) are a bench dependency only.
suppressPackageStartupMessages(library(rstan))
here <- dirname(normalizePath(sub("--file=", "", grep("--file=", commandArgs(), value = TRUE))))
source(file.path(here, "read_responses.R"))
taken <- take_persons_out(commandArgs(trailingOnly = TRUE))
args <- taken$args; persons_file <- taken$file
if (length(args) < 3) stop("usage: stan_reference.R RESPONSES.csv 2pl|grm OUT.csv [CHAINS] [ITER] [--persons-out PERSONS.csv]")
data_file <- args[1]; model <- args[2]; out_file <- args[3]
chains <- if (length(args) >= 4) as.integer(args[4]) else 4L
iter <- if (length(args) >= 5) as.integer(args[5]) else 2000L

read <- read_responses(data_file)
responses <- read$responses; person_ids <- read$person_ids; items <- read$items
cells <- which(!is.na(as.matrix(responses)), arr.ind = TRUE)
y <- as.matrix(responses)[cells]
stan_data <- list(P = nrow(responses), J = ncol(responses), N = length(y),
                  person = cells[, 1], item = cells[, 2],
                  log_a_mean = prior("LOG_A_MEAN", 0), log_a_sd = prior("LOG_A_SD", 0.5))
if (model == "2pl") {
  stan_data$y <- as.integer(y)
  stan_data$b_mean <- prior("B_MEAN", 0); stan_data$b_sd <- prior("B_SD", 1)
  stan_file <- file.path(here, "stan", "irt_2pl.stan")
} else if (model == "grm") {
  stan_data$K <- as.integer(max(y) + 1)
  stan_data$y <- as.integer(y + 1)
  stan_data$threshold_mean <- prior("B_MEAN", 0); stan_data$threshold_sd <- prior("B_SD", 1)
  stan_file <- file.path(here, "stan", "irt_grm.stan")
} else stop("MODEL must be 2pl or grm")

options(mc.cores = min(chains, parallel::detectCores()))
# Debian 12 packages Boost in /usr/include, not in R's BH package where rstan 2.21 looks.
compiled <- stan_model(stan_file, boost_lib = "/usr/include")
started <- proc.time()[["elapsed"]]
item_pars <- c("log_a", "b")
fit <- sampling(compiled, data = stan_data, chains = chains, iter = iter, seed = 1, refresh = 0,
                pars = if (is.na(persons_file)) item_pars else c(item_pars, "theta"))
seconds <- proc.time()[["elapsed"]] - started
summary <- monitor(as.array(fit, pars = item_pars), warmup = 0, print = FALSE)
draws <- as.matrix(fit, pars = item_pars)

rows <- list()
add <- function(item, parameter, column) {
  d <- draws[, column]
  rows[[length(rows) + 1]] <<- data.frame(item = item, parameter = parameter, mean = mean(d), sd = sd(d),
    q2.5 = quantile(d, 0.025), q50 = quantile(d, 0.5), q97.5 = quantile(d, 0.975),
    rhat = summary[column, "Rhat"], ess_bulk = summary[column, "Bulk_ESS"], seconds = seconds)
}
for (j in seq_along(items)) {
  add(items[j], "log_a", sprintf("log_a[%d]", j))
  if (model == "2pl") add(items[j], "b", sprintf("b[%d]", j))
  else for (k in seq_len(stan_data$K - 1)) add(items[j], sprintf("b%d", k), sprintf("b[%d,%d]", j, k))
}
table <- do.call(rbind, rows)
write.csv(table, out_file, row.names = FALSE)
cat(sprintf("%s: %d persons x %d items, %d chains x %d iterations in %.0f s; R-hat max %.3f, bulk ESS min %.0f\n",
            data_file, stan_data$P, stan_data$J, chains, iter, seconds, max(table$rhat), min(table$ess_bulk)))
if (!is.na(persons_file)) {
  theta <- as.matrix(fit, pars = "theta")
  theta_summary <- monitor(as.array(fit, pars = "theta"), warmup = 0, print = FALSE)
  quantiles <- apply(theta, 2, quantile, probs = c(0.025, 0.5, 0.975))
  persons <- data.frame(person = person_ids, theta_mean = colMeans(theta), theta_sd = apply(theta, 2, sd),
                        theta_q2.5 = quantiles[1, ], theta_q50 = quantiles[2, ], theta_q97.5 = quantiles[3, ],
                        rhat = theta_summary[, "Rhat"], ess_bulk = theta_summary[, "Bulk_ESS"])
  write.csv(persons, persons_file, row.names = FALSE)
  cat(sprintf("persons: R-hat max %.3f, bulk ESS min %.0f\n", max(persons$rhat), min(persons$ess_bulk)))
}
if (max(table$rhat) > 1.01 || min(table$ess_bulk) < 400) {
  cat("not converged: R-hat above 1.01 or bulk ESS below 400; run more iterations\n")
  quit(status = 1)
}
