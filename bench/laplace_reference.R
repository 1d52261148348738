#!/usr/bin/env Rscript
# The classical peer of bfhpo's amortized posterior (issue 40 part 6): the
# Laplace approximation at the mode of the item parameters' marginal
# posterior, what marginal maximum likelihood with standard errors (mirt's
# MML, here with the priors) gives a user in a second.
#
#   Rscript bench/laplace_reference.R RESPONSES.csv MODEL OUT.csv [PERSONS.csv]
#   Rscript bench/laplace_reference.R RESPONSES.csv MODEL OUT.csv --persons-out PERSONS.csv
#
# The same command line, model, priors and output columns as
# bench/stan_reference.R (RESPONSES.csv as `bfhpo infer` reads it; MODEL 2pl
# or grm, categories 0..K-1; priors log a ~ N(LOG_A_MEAN 0, LOG_A_SD 0.5), b
# and thresholds ~ N(B_MEAN 0, B_SD 1) from the environment; missing cells
# left out): OUT.csv has one row per item parameter (item, parameter, mean,
# sd, q2.5, q50, q97.5, seconds), mean the mode, sd from the inverse Hessian
# of the log posterior at the mode, normal quantiles.
#
# The log posterior: the item parameters' log prior plus the marginal log
# likelihood, each person's ability integrated out over N(0, 1) on a grid of
# LAPLACE_NODES (121) equally spaced points on [-6, 6] with weights
# proportional to the normal density. Maximized by optim's BFGS with the
# analytic gradient (a graded item's thresholds as Stan's `ordered` vector
# holds them: b1, then log(b_k - b_(k-1)), so they stay ordered); the
# Hessian is optimHess's difference of the analytic gradient in the
# parameters reported (log a, b; log a, b1..b(K-1)): at an interior mode the
# constraint is not binding and the posterior on the ordered thresholds is
# the product of the normals (Stan's model without the transform's
# Jacobian), so its mode is the constrained one.
#
# PERSONS.csv (optional): each person's ability posterior given the item
# parameters at the mode (what mirt's fscores gives: EAP and its sd), in the
# file's row order: person (the id column, else the row number), theta_mean,
# theta_sd, theta_q2.5, theta_q50, theta_q97.5 (the quantiles by linear
# interpolation of the posterior's distribution function on a grid of 1201
# points on [-6, 6]).
here <- dirname(normalizePath(sub("--file=", "", grep("--file=", commandArgs(), value = TRUE))))
source(file.path(here, "read_responses.R"))
taken <- take_persons_out(commandArgs(trailingOnly = TRUE))
args <- taken$args; persons_file <- taken$file
if (length(args) < 3) stop("usage: laplace_reference.R RESPONSES.csv 2pl|grm OUT.csv [PERSONS.csv | --persons-out PERSONS.csv]")
data_file <- args[1]; model <- args[2]; out_file <- args[3]
if (length(args) >= 4) persons_file <- args[4]
log_a_mean <- prior("LOG_A_MEAN", 0); log_a_sd <- prior("LOG_A_SD", 0.5)
b_mean <- prior("B_MEAN", 0); b_sd <- prior("B_SD", 1)
n_nodes <- as.integer(Sys.getenv("LAPLACE_NODES", "121"))

read <- read_responses(data_file)
responses <- read$responses; person_ids <- read$person_ids; items <- read$items
Y <- as.matrix(responses)
observed <- !is.na(Y)
P <- nrow(Y); J <- ncol(Y)
if (!(model %in% c("2pl", "grm"))) stop("MODEL must be 2pl or grm")
K <- if (model == "2pl") 2L else as.integer(max(Y, na.rm = TRUE) + 1)
# indicator[[k + 1]]: P x J, 1 where the person answered the item with category k
indicator <- lapply(0:(K - 1), function(k) { m <- (Y == k) & observed; m[is.na(m)] <- FALSE; m * 1 })

started <- proc.time()[["elapsed"]]

grid <- function(n) {
  nodes <- seq(-6, 6, length.out = n)
  list(nodes = nodes, log_w = dnorm(nodes, log = TRUE) - log(sum(dnorm(nodes))))
}

# Item parameters in the reported space: log_a (J), thresholds (J x (K-1)).
unpack <- function(par) list(log_a = par[1:J], b = matrix(par[-(1:J)], J, K - 1))
# The constrained thresholds from the unconstrained: b1, log increments.
to_thresholds <- function(x) if (K == 2) x else t(apply(x, 1, function(r) cumsum(c(r[1], exp(r[-1])))))
from_thresholds <- function(b) if (K == 2) b else cbind(b[, 1], log(pmax(t(apply(b, 1, diff)), 1e-8)))

# Category probabilities on the nodes: prob[[k + 1]] is J x Q; S[[k + 1]] =
# P(y >= k), k = 0..K, with S_0 = 1 and S_K = 0; eta[[k]] for k = 1..K-1.
curves <- function(log_a, b, nodes) {
  a <- exp(log_a)
  eta <- lapply(1:(K - 1), function(k) a * outer(-b[, k], nodes, "+"))
  S <- c(list(matrix(1, J, length(nodes))), lapply(eta, plogis), list(matrix(0, J, length(nodes))))
  prob <- lapply(1:K, function(k) pmax(S[[k]] - S[[k + 1]], 1e-300))
  list(a = a, eta = eta, S = S, prob = prob)
}

# The log posterior, its gradient in (log_a, b), and each person's posterior
# over the nodes.
log_posterior <- function(par, nodes_grid, with_gradient = TRUE) {
  p <- unpack(par)
  if (K > 2 && any(apply(p$b, 1, diff) <= 0)) return(list(value = -Inf))
  cv <- curves(p$log_a, p$b, nodes_grid$nodes)
  L <- Reduce(`+`, lapply(1:K, function(k) indicator[[k]] %*% log(cv$prob[[k]])))  # P x Q
  L <- sweep(L, 2, nodes_grid$log_w, "+")
  top <- apply(L, 1, max)
  post <- exp(L - top)
  norm <- rowSums(post)
  post <- post / norm
  value <- sum(top + log(norm)) +
    sum(dnorm(p$log_a, log_a_mean, log_a_sd, log = TRUE)) + sum(dnorm(p$b, b_mean, b_sd, log = TRUE))
  result <- list(value = value, post = post)
  if (!with_gradient) return(result)
  # Expected counts of each category at each node: J x Q.
  counts <- lapply(1:K, function(k) t(indicator[[k]]) %*% post)
  g_log_a <- -(p$log_a - log_a_mean) / log_a_sd^2
  g_b <- -(p$b - b_mean) / b_sd^2
  slope <- lapply(cv$S, function(s) s * (1 - s))  # dS/deta, zero at S_0 and S_K
  for (k in 1:K) {
    # d log P(y = k - 1) = (dS_(k-1) - dS_k) / prob, with S indexed from 0
    weight <- counts[[k]] / cv$prob[[k]]
    upper <- if (k >= 2) slope[[k]] else NULL        # S_(k-1), threshold k - 1
    lower <- if (k <= K - 1) slope[[k + 1]] else NULL  # S_k, threshold k
    if (!is.null(upper)) {
      g_log_a <- g_log_a + rowSums(weight * upper * cv$eta[[k - 1]])
      g_b[, k - 1] <- g_b[, k - 1] - cv$a * rowSums(weight * upper)
    }
    if (!is.null(lower)) {
      g_log_a <- g_log_a - rowSums(weight * lower * cv$eta[[k]])
      g_b[, k] <- g_b[, k] + cv$a * rowSums(weight * lower)
    }
  }
  result$gradient <- c(g_log_a, g_b)
  result
}

fit_grid <- grid(n_nodes)
# Unconstrained parameters for optim: log_a, then b1 and log increments.
to_par <- function(x) { m <- matrix(x[-(1:J)], J, K - 1); c(x[1:J], to_thresholds(m)) }
objective <- function(x) { v <- log_posterior(to_par(x), fit_grid, FALSE)$value; if (is.finite(v)) -v else 1e300 }
gradient <- function(x) {
  g <- log_posterior(to_par(x), fit_grid)$gradient
  if (K == 2) return(-g)
  m <- matrix(x[-(1:J)], J, K - 1)
  gb <- matrix(g[-(1:J)], J, K - 1)
  # b_k = x_1 + sum_{m=2..k} exp(x_m): d/dx_1 = sum_k g_k, d/dx_m = exp(x_m) sum_{k>=m} g_k
  tail_sums <- t(apply(gb, 1, function(r) rev(cumsum(rev(r)))))
  gx <- tail_sums
  if (K > 2) gx[, -1] <- tail_sums[, -1] * exp(m[, -1])
  -c(g[1:J], gx)
}
# Start: log a at the prior mean, thresholds spread over the observed logits.
start_b <- matrix(0, J, K - 1)
for (j in 1:J) {
  y <- Y[observed[, j], j]
  share <- sapply(1:(K - 1), function(k) mean(y >= k))
  start_b[j, ] <- sort(qlogis(pmin(pmax(share, 0.02), 0.98)) * -1.7)
  if (K > 2) start_b[j, ] <- start_b[j, ] + seq(0, 1e-3, length.out = K - 1)
}
x0 <- c(rep(log_a_mean, J), from_thresholds(start_b))
fit <- optim(x0, objective, gradient, method = "BFGS",
             control = list(maxit = 10000, reltol = 1e-14))
if (fit$convergence != 0) stop(sprintf("optim did not converge (code %d)", fit$convergence))
mode <- to_par(fit$par)
hessian <- optimHess(mode, function(par) -log_posterior(par, fit_grid, FALSE)$value,
                     function(par) -log_posterior(par, fit_grid)$gradient)
covariance <- solve(hessian)
sds <- sqrt(diag(covariance))
seconds <- proc.time()[["elapsed"]] - started
gradient_norm <- max(abs(log_posterior(mode, fit_grid)$gradient))

names_of <- if (K == 2) "b" else sprintf("b%d", 1:(K - 1))
parameter <- c(rep("log_a", J), rep(names_of, each = J))
item <- c(items, rep(items, K - 1))
table <- data.frame(item = item, parameter = parameter, mean = mode, sd = sds,
                    q2.5 = mode + qnorm(0.025) * sds, q50 = mode, q97.5 = mode + qnorm(0.975) * sds,
                    seconds = seconds)
order_rows <- order(match(table$item, items), match(table$parameter, c("log_a", names_of)))
table <- table[order_rows, ]
write.csv(table, out_file, row.names = FALSE)
cat(sprintf("%s: %d persons x %d items, K %d, Laplace at the mode in %.2f s (%d function / %d gradient calls, max |gradient| %.1e, %d nodes)\n",
            data_file, P, J, K, seconds, fit$counts[1], fit$counts[2], gradient_norm, n_nodes))

if (!is.na(persons_file)) {
  fine <- grid(1201)
  post <- log_posterior(mode, fine, FALSE)$post
  nodes <- fine$nodes
  mean_theta <- as.vector(post %*% nodes)
  sd_theta <- sqrt(pmax(as.vector(post %*% nodes^2) - mean_theta^2, 0))
  cdf <- t(apply(post, 1, cumsum))
  quantile_of <- function(q) apply(cdf, 1, function(c) approx(c, nodes, q, ties = "ordered", rule = 2)$y)
  persons <- data.frame(person = person_ids, theta_mean = mean_theta, theta_sd = sd_theta,
                        theta_q2.5 = quantile_of(0.025), theta_q50 = quantile_of(0.5),
                        theta_q97.5 = quantile_of(0.975))
  write.csv(persons, persons_file, row.names = FALSE)
}
