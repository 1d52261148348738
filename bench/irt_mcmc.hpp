// Reference posterior of one IRT dataset by Markov chain Monte Carlo, for
// bench/posterior_quality: Metropolis-within-Gibbs over the abilities and
// the item parameters of any ItemResponseModel, with its own prior
// (ItemResponseModel::log_prior) and theta_p ~ N(0, 1).
//
// One sweep: a random-walk proposal for every ability at once (persons are
// independent given the items, so each is accepted on its own), then for
// each item-parameter component a random-walk proposal for every item at
// once (items are independent given the abilities). Every step size is
// adapted during warm-up towards an acceptance rate of 0.44 (the optimum of
// a one-dimensional random walk) and frozen afterwards, so the kept draws
// come from a fixed, valid Markov chain. Chains start from the prior (item
// parameters) and N(0, 1) (abilities), overdispersed against the posterior,
// as split R-hat assumes. Float64 on the CPU; missing cells (mask 0) do not
// enter the likelihood.
#pragma once

#include "models/simulators/item_response_model.hpp"

#include <torch/torch.h>

#include <cstdint>

namespace bfhpo::bench {

struct McmcOptions {
  int64_t chains = 4;
  int64_t warmup_sweeps = 1000;
  int64_t sampling_sweeps = 2000;
  int64_t thin = 2;             // keep every thin-th sweep
  int64_t adapt_every = 50;     // warm-up sweeps between step-size updates
  uint64_t seed = 1;
};

struct McmcResult {
  torch::Tensor draws;          // [J, chains * sampling_sweeps / thin, D] item-parameter draws, float64
  torch::Tensor split_rhat;     // [J, D] split R-hat (Gelman et al., BDA3 11.4) of every item parameter
  double ability_acceptance = 0.0;  // mean acceptance rate after warm-up
  double item_acceptance = 0.0;
};

// responses and mask [P, J] (responses in 0..K-1, mask 1 observed / 0 missing).
McmcResult sample_item_posterior(const models::ItemResponseModel& model, const torch::Tensor& responses,
                                 const torch::Tensor& mask, const McmcOptions& options);

}  // namespace bfhpo::bench
