#include "config/field_registry.h"

#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <google/protobuf/descriptor.pb.h>

namespace tzrec::config {
namespace {

namespace pb = google::protobuf;

constexpr FieldSupport kHonoured = FieldSupport::kHonoured;
constexpr FieldSupport kRefused = FieldSupport::kRefused;
constexpr FieldSupport kWarned = FieldSupport::kWarned;

struct Entry {
  const char* message;  // name in package tzrec.protos
  FieldSupport support;
  const char* fields;   // space-separated field names; "*": every field of the message
  const char* why;      // kWarned: why the field has no effect here
};

// A sequence encoder's name labels nothing: TorchEasyRec names encoders by their group and position.
constexpr const char* kEncoderNameWhy =
    "encoders are named by their group and position (_group_name_to_seq_encoders.<group>.<i>), as in "
    "TorchEasyRec";

// Messages only reachable through refused fields (models, feature types, samplers, ... not built
// yet) are refused as a whole ("*"). Messages this engine reads list every field, so that a field
// added to the schema has no rule until someone decides what it means here.
constexpr Entry kEntries[] = {
    {"Field", kHonoured, "input_name", ""},
    {"Field", kWarned, "input_type", "columns are parsed as the features and labels that read them need"},
    {"DataConfig", kHonoured,
     "batch_size dataset_type fg_encoded fg_encoded_multival_sep label_fields num_workers "
     "input_fields delimiter with_header eval_batch_size drop_remainder fg_threads "
     "sample_weight_fields fg_mode force_base_data_group input_fields_str batch_cost_size sample_cost_field "
     "shuffle shuffle_buffer_size",
     ""},
    // Training masks of use_mask features (feature/sample_mask.h).
    {"DataConfig", kHonoured, "sample_mask_prob negative_sample_mask_prob", ""},
    // Negative samplers run in process (data/negative_sampler.h, feature/negative_rows.h); only
    // match models read their rows (models/model_registry.cc).
    {"DataConfig", kHonoured, "negative_sampler negative_sampler_v2 hard_negative_sampler hard_negative_sampler_v2",
     ""},
    // tdm_sampler expands each batch with tree samples (tdm/tdm_sampler.h, feature/tdm_rows.h).
    {"DataConfig", kHonoured, "tdm_sampler", ""},
    {"DataConfig", kWarned, "pin_memory", "pins host memory for CUDA copies; no effect in this CPU engine"},
    {"DataConfig", kWarned,
     "is_orderby_partition odps_data_quota_name odps_data_compression",
     "OdpsDataset only (MaxCompute); no effect with the dataset types this engine reads"},
    {"DataConfig", kWarned, "in_order", "batches always come in a fixed, reproducible order here"},
    {"EvalConfig", kHonoured, "num_steps log_step_count_steps use_dense_ema", ""},
    {"ExportConfig", kHonoured,
     "exporter_type best_exporter_metric metric_larger_is_better mixed_precision use_dense_ema",
     ""},
    {"ExportConfig", kWarned,
     "cudnn_allow_tf32 cuda_matmul_allow_tf32",
     "CUDA only: no effect in this CPU engine"},
    {"ParameterConstraints", kHonoured, "sharding_types compute_kernels", ""},
    // Zero-collision hashing (embedding/zch_embedding_bag_collection.h; id, combo, lookup, match,
    // custom and bool_mask features, feature/zch_settings.h).
    {"LRU_EvictionPolicy", kHonoured, "decay_exponent", ""},
    {"DistanceLFU_EvictionPolicy", kHonoured, "decay_exponent", ""},
    {"ZeroCollisionHash", kHonoured, "zch_size eviction_interval lfu lru distance_lfu threshold_filtering_func", ""},
    {"AutoDisEmbedding", kHonoured, "num_channels temperature keep_prob", ""},
    // Dynamic embeddings (embedding/dynamic_embedding_bag_collection.h; id, combo, lookup, match,
    // custom and bool_mask features, feature/dynamicemb_settings.h).
    {"DynamicEmbInitializerArgs", kHonoured, "mode mean std_dev lower upper value", ""},
    {"DynamicEmbFrequencyAdmissionStrategy", kHonoured, "threshold initializer_args counter_capacity counter_bucket_capacity",
     ""},
    {"DynamicEmbedding", kHonoured,
     "initializer_args eval_initializer_args score_strategy max_capacity init_capacity_per_rank bucket_capacity "
     "frequency_admission_strategy init_table",
     ""},
    {"DynamicEmbedding", kWarned, "cache_load_factor",
     "share of a table cached in GPU memory; no effect in this CPU engine (tables live in host memory)"},
    {"IdFeature", kHonoured,
     "feature_name expression embedding_name embedding_dim hash_bucket_size num_buckets "
     "vocab_list vocab_dict value_dim pooling default_value separator weighted init_fn "
     "fg_encoded_default_value default_bucketize_value fg_value_type trainable data_type "
     "embedding_constraints sequence_length sequence_delim",
     ""},
    {"IdFeature", kHonoured, "vocab_file asset_dir", ""},
    {"IdFeature", kHonoured, "stub_type", ""},
    {"IdFeature", kHonoured, "zch dynamicemb", ""},
    {"IdFeature", kHonoured, "sequence_fields", ""},  // feature/multi_input.h: check_single_input_sequence_fields
    {"IdFeature", kHonoured, "use_mask", ""},  // feature/sample_mask.h
    {"RawFeature", kHonoured,
     "feature_name expression embedding_name embedding_dim boundaries value_dim normalizer "
     "pooling default_value separator init_fn fg_encoded_default_value trainable data_type "
     "embedding_constraints sequence_length sequence_delim",
     ""},
    {"RawFeature", kHonoured, "autodis mlp", ""},
    {"RawFeature", kHonoured, "stub_type", ""},
    {"RawFeature", kHonoured, "sequence_fields", ""},  // feature/multi_input.h: check_single_input_sequence_fields
    {"RawFeature", kHonoured, "use_mask", ""},  // feature/sample_mask.h
    {"ComboFeature", kHonoured,
     "feature_name expression embedding_name embedding_dim hash_bucket_size vocab_list vocab_dict "
     "value_dim pooling default_value separator init_fn fg_encoded_default_value default_bucketize_value "
     "trainable data_type embedding_constraints sequence_length sequence_delim sequence_fields",
     ""},
    {"ComboFeature", kHonoured, "vocab_file asset_dir", ""},
    {"ComboFeature", kHonoured, "stub_type", ""},
    {"ComboFeature", kHonoured, "zch dynamicemb", ""},
    {"ComboFeature", kHonoured, "use_mask", ""},  // feature/sample_mask.h
    {"CombineFeature", kHonoured,
     "feature_name expression embedding_name embedding_dim value_map boundaries num_buckets pooling "
     "default_value separator normalizer init_fn combiner fg_encoded_default_value trainable data_type "
     "autodis mlp embedding_constraints sequence_length sequence_delim sequence_fields stub_type",
     ""},
    {"CombineFeature", kHonoured, "use_mask", ""},  // feature/sample_mask.h
    {"LookupFeature", kHonoured,
     "feature_name map key embedding_name embedding_dim boundaries hash_bucket_size num_buckets "
     "vocab_list vocab_dict pooling combiner default_value separator need_discrete need_key normalizer "
     "init_fn value_dim value_separator fg_encoded_default_value default_bucketize_value fg_value_type "
     "trainable data_type embedding_constraints sequence_length sequence_delim sequence_fields",
     ""},
    {"LookupFeature", kHonoured, "vocab_file asset_dir", ""},
    {"LookupFeature", kHonoured, "autodis mlp", ""},
    {"LookupFeature", kHonoured, "stub_type", ""},
    {"LookupFeature", kHonoured, "zch dynamicemb", ""},
    {"LookupFeature", kHonoured, "use_mask", ""},  // feature/sample_mask.h
    {"MatchFeature", kHonoured,
     "feature_name nested_map pkey skey embedding_name embedding_dim boundaries hash_bucket_size "
     "num_buckets vocab_list vocab_dict pooling default_value separator need_discrete show_pkey show_skey "
     "normalizer init_fn value_dim fg_encoded_default_value default_bucketize_value fg_value_type "
     "trainable data_type embedding_constraints sequence_length sequence_delim sequence_fields",
     ""},
    {"MatchFeature", kHonoured, "vocab_file asset_dir", ""},
    {"MatchFeature", kHonoured, "autodis mlp", ""},
    {"MatchFeature", kHonoured, "stub_type", ""},
    {"MatchFeature", kHonoured, "zch dynamicemb", ""},
    {"MatchFeature", kHonoured, "use_mask", ""},  // feature/sample_mask.h
    {"ExprFeature", kHonoured,
     "feature_name expression variables embedding_name embedding_dim boundaries separator fill_missing "
     "pooling default_value init_fn value_dim fg_encoded_default_value trainable data_type "
     "embedding_constraints sequence_length sequence_delim sequence_fields",
     ""},
    {"ExprFeature", kHonoured, "autodis mlp", ""},
    {"ExprFeature", kHonoured, "stub_type", ""},
    {"ExprFeature", kHonoured, "use_mask", ""},  // feature/sample_mask.h
    {"OverlapFeature", kHonoured,
     "feature_name query title method embedding_name embedding_dim boundaries normalizer pooling separator "
     "init_fn fg_encoded_default_value trainable data_type autodis mlp embedding_constraints sequence_length "
     "sequence_delim sequence_fields stub_type",
     ""},
    {"OverlapFeature", kHonoured, "use_mask", ""},  // feature/sample_mask.h
    {"TextNormalizer", kHonoured, "max_length norm_options stop_char_file", ""},
    {"TokenizeFeature", kHonoured,
     "feature_name expression embedding_name embedding_dim text_normalizer vocab_file asset_dir pooling "
     "default_value tokenizer_type init_fn fg_encoded_default_value trainable stub_type data_type "
     "embedding_constraints sequence_length sequence_delim sequence_fields tokens_as_sequence",
     ""},
    {"TokenizeFeature", kHonoured, "use_mask", ""},  // feature/sample_mask.h
    {"KvDotProduct", kHonoured,
     "feature_name query document embedding_name embedding_dim boundaries separator pooling default_value "
     "init_fn fg_encoded_default_value trainable data_type autodis mlp embedding_constraints sequence_length "
     "sequence_delim sequence_fields stub_type",
     ""},
    {"KvDotProduct", kWarned, "normalizer",
     "TorchEasyRec's kv_dot_product hands no normalizer to feature generation (its fg.json entry has none); the "
     "dot product is used as is"},
    {"KvDotProduct", kRefused, "kv_delimiter", ""},
    {"KvDotProduct", kHonoured, "use_mask", ""},  // feature/sample_mask.h
    {"CustomFeature", kHonoured,
     "feature_name operator_name operator_lib_file operator_params is_op_thread_safe expression embedding_name "
     "embedding_dim boundaries hash_bucket_size num_buckets vocab_list vocab_dict vocab_file asset_dir pooling "
     "default_value separator normalizer init_fn value_dim fg_encoded_default_value default_bucketize_value "
     "trainable data_type embedding_constraints sequence_length sequence_delim sequence_fields autodis mlp",
     ""},
    {"CustomFeature", kHonoured, "stub_type", ""},
    {"CustomFeature", kHonoured, "zch dynamicemb", ""},
    {"CustomFeature", kHonoured, "use_mask", ""},  // feature/sample_mask.h
    {"BoolMaskFeature", kHonoured,
     "feature_name expression embedding_name embedding_dim hash_bucket_size num_buckets vocab_list vocab_dict "
     "vocab_file asset_dir value_dim pooling default_value separator init_fn fg_encoded_default_value "
     "default_bucketize_value fg_value_type trainable data_type embedding_constraints sequence_length "
     "sequence_delim sequence_fields stub_type",
     ""},
    {"BoolMaskFeature", kHonoured, "zch dynamicemb", ""},
    {"BoolMaskFeature", kHonoured, "use_mask", ""},  // feature/sample_mask.h
    {"SequenceFeature", kHonoured, "sequence_name sequence_length sequence_delim features", ""},
    {"SequenceFeature", kWarned, "sequence_pk",
     "the key online serving joins a history's item features by; no effect in offline training"},
    {"FeatureConfig", kHonoured,
     "id_feature raw_feature sequence_feature sequence_id_feature sequence_raw_feature combo_feature "
     "lookup_feature match_feature sequence_combo_feature sequence_lookup_feature sequence_match_feature "
     "expr_feature sequence_expr_feature custom_feature sequence_custom_feature overlap_feature "
     "sequence_overlap_feature kv_dot_product sequence_kv_dot_product bool_mask_feature "
     "sequence_bool_mask_feature combine_feature sequence_combine_feature tokenize_feature "
     "sequence_tokenize_feature",
     ""},
    {"SeqFeatureConfig", kHonoured,
     "id_feature raw_feature combo_feature lookup_feature match_feature expr_feature custom_feature "
     "overlap_feature kv_dot_product bool_mask_feature combine_feature tokenize_feature",
     ""},
    {"LossConfig", kHonoured,
     "binary_cross_entropy softmax_cross_entropy l2_loss jrc_loss binary_focal_loss",
     ""},
    // The semantic-ID models' losses (loss/sid_*_loss.h, models/sid/sid_model.h).
    {"LossConfig", kHonoured, "recon_loss commitment_loss contrastive_loss", ""},
    {"BinaryCrossEntropy", kHonoured, "label_smoothing", ""},
    {"SoftmaxCrossEntropy", kHonoured, "label_smoothing", ""},
    {"JRCLoss", kHonoured, "session_name alpha", ""},
    {"BinaryFocalLoss", kHonoured, "gamma alpha", ""},
    {"SidReconLoss", kHonoured, "recon_type", ""},
    {"SidCommitmentLoss", kHonoured, "latent_weight commitment_type", ""},
    {"AUC", kHonoured, "thresholds", ""},
    {"MulticlassAUC", kHonoured, "thresholds average", ""},
    {"RecallAtK", kHonoured, "top_k", ""},
    {"Accuracy", kHonoured, "threshold top_k", ""},
    {"GroupedAUC", kHonoured, "grouping_key", ""},
    {"XAUC", kHonoured, "sample_ratio max_pairs in_batch", ""},
    {"GroupedXAUC", kHonoured, "grouping_key max_pairs_per_group", ""},
    {"NormalizedEntropy", kHonoured, "eta", ""},
    {"MetricConfig", kHonoured,
     "auc multiclass_auc recall_at_k mean_absolute_error mean_squared_error accuracy "
     "grouped_auc xauc grouped_xauc normalized_entropy",
     ""},
    {"TrainMetricConfig", kHonoured,
     "auc recall_at_k mean_absolute_error mean_squared_error accuracy xauc decay_rate "
     "decay_step",
     ""},
    // embedding_name_suffix: embedding/table_name.h.
    {"SeqGroupConfig", kHonoured, "group_name feature_names embedding_name_suffix", ""},
    {"FeatureGroupConfig", kHonoured,
     "group_name feature_names group_type sequence_groups sequence_encoders embedding_name_suffix", ""},
    {"ModelConfig", kHonoured,
     "feature_groups dlrm deepfm multi_tower multi_tower_din mask_net wide_and_deep dcn_v1 dcn_v2 xdeepfm wukong "
     "rocket_launching mmoe dbmtl ple pepnet dc2vr dlrm_hstu ultra_hstu dssm dssm_v2 dat mind hstu_match tdm num_class "
     "losses "
     "metrics train_metrics "
     "variational_dropout use_pareto_loss_weight",
     ""},
    {"ModelConfig", kRefused, "simple_multi_task", ""},
    {"ModelConfig", kWarned,
     "kernel",
     "selects GPU kernel implementations (Triton / CUTLASS); this engine runs its own"},
    {"RocketLaunching", kHonoured,
     "share_mlp booster_mlp light_mlp feature_based_distillation feature_distillation_function", ""},
    {"DSSM", kHonoured, "user_tower item_tower output_dim similarity temperature in_batch_negative", ""},
    {"DSSMV2", kHonoured, "user_tower item_tower output_dim similarity temperature in_batch_negative", ""},
    {"DAT", kHonoured,
     "user_tower item_tower output_dim similarity temperature in_batch_negative amm_i_weight amm_u_weight", ""},
    {"MIND", kHonoured, "user_tower item_tower simi_pow similarity in_batch_negative temperature output_dim", ""},
    {"HSTUMatch", kHonoured,
     "user_tower item_tower output_dim similarity temperature in_batch_negative sequence_timestamp_is_ascending", ""},
    {"TDM", kHonoured, "multiwindow_din final", ""},
    {"SimpleMultiTask", kRefused, "*", ""},
    {"MMoE", kHonoured, "expert_mlp gate_mlp num_expert task_towers", ""},
    {"DBMTL", kHonoured, "bottom_mlp expert_mlp gate_mlp num_expert task_towers mask_net", ""},
    {"PLE", kHonoured, "extraction_networks task_towers", ""},
    {"DC2VR", kHonoured, "bottom_mlp expert_mlp gate_mlp num_expert task_towers", ""},
    {"PEPNet", kHonoured,
     "epnet_hidden_unit epnet_gamma ppnet_hidden_units ppnet_activation ppnet_dropout_ratio ppnet_gamma "
     "domain_input_name task_domain_num task_towers",
     ""},
    {"DlrmHSTU", kHonoured, "hstu fusion_mtl_tower max_seq_len item_embedding_hidden_dim enable_global_average_loss sequence_timestamp_is_ascending concat_contextual_features", ""},
    {"UltraHSTU", kHonoured,
     "hstu fusion_mtl_tower max_seq_len item_embedding_hidden_dim enable_global_average_loss "
     "sequence_timestamp_is_ascending concat_contextual_features",
     ""},
    {"DLRM", kHonoured, "dense_mlp arch_with_sparse final", ""},
    {"DeepFM", kHonoured, "deep final wide_embedding_dim wide_init_fn", ""},
    {"MultiTower", kHonoured, "towers final", ""},
    {"MultiTowerDIN", kHonoured, "towers din_towers final", ""},
    {"MaskNet", kHonoured, "mask_net_module", ""},
    {"WideAndDeep", kHonoured, "deep final wide_embedding_dim wide_init_fn", ""},
    {"DCNV1", kHonoured, "cross deep final", ""},
    {"DCNV2", kHonoured, "backbone cross deep final", ""},
    {"xDeepFM", kHonoured, "cin deep final wide_embedding_dim wide_init_fn", ""},
    {"WuKong", kHonoured, "dense_mlp wukong_layers final", ""},
    // Semantic-ID models (models/sid/, nn/sid/).
    {"ModelConfig", kHonoured, "sid_rqvae sid_rqkmeans", ""},
    {"FaissKmeansConfig", kHonoured,
     "niter nredo seed max_points_per_centroid min_points_per_centroid spherical verbose", ""},
    {"SinkhornConfig", kHonoured, "iters epsilon enabled", ""},
    {"ContrastiveConfig", kHonoured, "pair_feature_group pair_flag_feature_group", ""},
    {"SidCandidateOutputConfig", kHonoured, "enabled topk strategy", ""},
    {"SidRqvae", kHonoured,
     "embed_dim hidden_dims codebook forward_mode normalize_residuals distance_type rotation_trick kmeans_init "
     "sinkhorn_config contrastive_config candidate_output_config",
     ""},
    {"SidRqkmeans", kHonoured,
     "codebook normalize_residuals faiss_kmeans_kwargs train_sample_size candidate_output_config", ""},
    {"MLP", kHonoured, "hidden_units dropout_ratio activation use_bn bias use_ln", ""},
    {"ExtractionNetwork", kHonoured,
     "network_name expert_num_per_task share_num task_expert_net share_expert_net",
     ""},
    {"VariationalDropout", kHonoured, "regularization_lambda", ""},
    {"VariationalDropout", kWarned,
     "embedding_wise_variational_dropout",
     "as in TorchEasyRec, each feature of a group gets one dropout rate"},
    {"B2ICapsule", kHonoured,
     "max_k max_seq_len high_dim num_iters routing_logits_scale routing_logits_stddev squash_pow const_caps_num "
     "routing_init_method",
     ""},
    {"MaskBlock", kHonoured, "reduction_ratio aggregation_dim hidden_dim", ""},
    {"MaskNetModule", kHonoured, "n_mask_blocks mask_block top_mlp use_parallel", ""},
    {"Cross", kHonoured, "cross_num", ""},
    {"CrossV2", kHonoured, "cross_num low_rank", ""},
    {"CIN", kHonoured, "cin_layer_size", ""},
    {"WuKongLayer", kHonoured, "lcb_feature_num fmb_feature_num compressed_feature_num feature_num_mlp", ""},
    {"GRSimpleActionEncoder", kHonoured, "action_embedding_dim action_weights watchtime_to_action_thresholds watchtime_to_action_weights embedding_init_std", ""},
    {"GRActionEncoder", kHonoured, "simple_action_encoder", ""},
    {"GRMLPContentEncoder", kHonoured, "uih_mlp target_mlp", ""},
    {"GRContentEncoder", kHonoured, "slice_content_encoder pad_content_encoder mlp_content_encoder", ""},
    {"GRSimpleContextualizedMLP", kHonoured, "hidden_dim", ""},
    {"GRParameterizedContextualizedMLP", kHonoured, "hidden_dim contextual_dropout_ratio", ""},
    {"GRContextualizedMLP", kHonoured, "simple_mlp parameterized_mlp", ""},
    {"GRContextualPreprocessor", kHonoured, "action_encoder action_mlp content_encoder content_mlp", ""},
    {"GRContextualInterleavePreprocessor", kHonoured, "action_encoder enable_interleaving action_mlp content_encoder content_mlp", ""},
    {"GRUIHPreprocessor", kHonoured, "action_encoder action_mlp", ""},
    {"GRInputPreprocessor", kHonoured, "contextual_preprocessor contextual_interleave_preprocessor uih_preprocessor", ""},
    {"GRTimestampLayerNormPostprocessor", kHonoured, "time_duration_period_units time_duration_units_per_period", ""},
    {"GROutputPostprocessor", kHonoured, "l2norm_postprocessor layernorm_postprocessor timestamp_layernorm_postprocessor", ""},
    {"STU", kHonoured,
     "embedding_dim num_heads hidden_dim attention_dim output_dropout_ratio max_attn_len attn_alpha use_group_norm "
     "contextual_seq_len sla_k1 sla_k2 scaling_seqlen",
     ""},
    {"STU", kWarned, "recompute_normed_x recompute_uvqk recompute_y sort_by_length",
     "trades memory for speed in TorchEasyRec's GPU kernels; values are the same, this engine's CPU kernel recomputes "
     "attention scores in backward always"},
    {"GRPositionalEncoder", kHonoured, "num_position_buckets num_time_buckets use_time_encoding time_bucket_fn time_bucket_increments", ""},
    {"HSTU", kHonoured, "stu input_dropout_ratio attn_num_layers positional_encoder input_preprocessor output_postprocessor attn_truncation_split_layer attn_truncation_tail_len name", ""},
    {"SparseOptimizer", kHonoured,
     "sgd_optimizer adagrad_optimizer adam_optimizer lars_sgd_optimizer lamb_optimizer "
     "partial_rowwise_lamb_optimizer partial_rowwise_adam_optimizer rowwise_adagrad_optimizer "
     "adadelta_optimizer rmsprop_optimizer constant_learning_rate exponential_decay_learning_rate "
     "manual_step_learning_rate cosine_annealing_learning_rate cosine_annealing_warm_restarts_learning_rate",
     ""},
    {"DenseOptimizer", kHonoured,
     "sgd_optimizer adagrad_optimizer adam_optimizer adamw_optimizer adadelta_optimizer "
     "rmsprop_optimizer constant_learning_rate exponential_decay_learning_rate "
     "manual_step_learning_rate cosine_annealing_learning_rate "
     "cosine_annealing_warm_restarts_learning_rate part_optimizers ema",
     ""},
    {"PartOptimizer", kHonoured,
     "sgd_optimizer adagrad_optimizer adam_optimizer adamw_optimizer adadelta_optimizer "
     "rmsprop_optimizer regex_pattern constant_learning_rate exponential_decay_learning_rate "
     "manual_step_learning_rate cosine_annealing_learning_rate "
     "cosine_annealing_warm_restarts_learning_rate",
     ""},
    {"EMAConfig", kHonoured, "decay", ""},
    {"FusedSGDOptimizer", kHonoured, "lr gradient_clipping max_gradient", ""},
    {"FusedAdagradOptimizer", kHonoured, "lr gradient_clipping max_gradient initial_accumulator_value", ""},
    {"FusedAdamOptimizer", kHonoured, "lr beta1 beta2 weight_decay gradient_clipping max_gradient", ""},
    {"FusedLarsSGDOptimizer", kHonoured, "lr momentum weight_decay gradient_clipping max_gradient", ""},
    {"FusedLAMBOptimizer", kHonoured, "lr beta1 beta2 weight_decay gradient_clipping max_gradient", ""},
    {"FusedPartialRowWiseLAMBOptimizer", kHonoured,
     "lr beta1 beta2 weight_decay gradient_clipping max_gradient",
     ""},
    {"FusedPartialRowWiseAdamOptimizer", kHonoured,
     "lr beta1 beta2 weight_decay gradient_clipping max_gradient",
     ""},
    {"FusedRowWiseAdagradOptimizer", kHonoured,
     "lr weight_decay weight_decay_mode gradient_clipping max_gradient",
     ""},
    {"FusedAdadeltaOptimizer", kHonoured, "lr rho eps weight_decay gradient_clipping max_gradient", ""},
    {"FusedRMSpropOptimizer", kHonoured, "lr alpha eps weight_decay gradient_clipping max_gradient", ""},
    {"SGDOptimizer", kHonoured, "lr momentum weight_decay dampening nesterov", ""},
    {"SGDOptimizer", kWarned,
     "fused",
     "torch's fused implementation; this engine runs its own kernels (same results)"},
    {"AdagradOptimizer", kHonoured, "lr weight_decay initial_accumulator_value eps", ""},
    {"AdagradOptimizer", kWarned,
     "fused",
     "torch's fused implementation; this engine runs its own kernels (same results)"},
    {"AdamOptimizer", kHonoured, "lr beta1 beta2 weight_decay eps amsgrad", ""},
    {"AdamOptimizer", kWarned,
     "fused",
     "torch's fused implementation; this engine runs its own kernels (same results)"},
    {"AdamWOptimizer", kHonoured, "lr beta1 beta2 weight_decay eps amsgrad", ""},
    {"AdamWOptimizer", kWarned,
     "fused",
     "torch's fused implementation; this engine runs its own kernels (same results)"},
    {"AdadeltaOptimizer", kHonoured, "lr rho eps weight_decay", ""},
    {"RMSpropOptimizer", kHonoured, "lr alpha eps weight_decay", ""},
    {"ExponentialDecayLR", kHonoured,
     "decay_size decay_factor staircase warmup_learning_rate warmup_size min_learning_rate "
     "by_epoch",
     ""},
    {"ManualStepLR", kHonoured, "schedule_sizes learning_rates warmup by_epoch", ""},
    {"CosineAnnealingLR", kHonoured, "T_max min_learning_rate warmup_learning_rate warmup_size by_epoch", ""},
    {"CosineAnnealingWarmRestartsLR", kHonoured,
     "T_0 T_mult min_learning_rate warmup_learning_rate warmup_size by_epoch",
     ""},
    {"EasyRecConfig", kHonoured,
     "train_input_path eval_input_path model_dir train_config eval_config export_config "
     "data_config feature_configs model_config",
     ""},
    {"NegativeSampler", kHonoured,
     "input_path num_sample attr_fields item_id_field attr_delimiter num_eval_sample field_delimiter item_id_delim", ""},
    {"NegativeSamplerV2", kHonoured,
     "user_input_path item_input_path pos_edge_input_path num_sample attr_fields item_id_field user_id_field "
     "attr_delimiter num_eval_sample field_delimiter",
     ""},
    {"HardNegativeSampler", kHonoured,
     "user_input_path item_input_path hard_neg_edge_input_path num_sample num_hard_sample attr_fields item_id_field "
     "user_id_field attr_delimiter num_eval_sample field_delimiter",
     ""},
    {"HardNegativeSamplerV2", kHonoured,
     "user_input_path item_input_path pos_edge_input_path hard_neg_edge_input_path num_sample num_hard_sample "
     "attr_fields item_id_field user_id_field attr_delimiter num_eval_sample field_delimiter",
     ""},
    {"TDMSampler", kHonoured,
     "item_input_path edge_input_path attr_fields item_id_field layer_num_sample attr_delimiter field_delimiter "
     "remain_ratio probability_type",
     ""},
    // Read by tzrec tdm_retrieval (tdm/beam_search.h); training does not read it.
    {"TDMSampler", kHonoured, "predict_edge_input_path", ""},
    {"TDMSampler", kRefused, "num_eval_sample", ""},
    {"DINEncoder", kHonoured, "input attn_mlp max_seq_length", ""},
    {"SimpleAttention", kHonoured, "input max_seq_length", ""},
    {"PoolingEncoder", kHonoured, "input pooling_type max_seq_length", ""},
    {"DINEncoder", kWarned, "name", kEncoderNameWhy},
    {"SimpleAttention", kWarned, "name", kEncoderNameWhy},
    {"PoolingEncoder", kWarned, "name", kEncoderNameWhy},
    {"MultiWindowDINEncoder", kHonoured, "input attn_mlp windows_len", ""},
    {"MultiWindowDINEncoder", kWarned, "name", kEncoderNameWhy},
    {"SelfAttentionEncoder", kHonoured, "input multihead_attn_dim num_heads dropout max_seq_length", ""},
    {"SelfAttentionEncoder", kWarned, "name", kEncoderNameWhy},
    {"SeqEncoderConfig", kHonoured,
     "din_encoder simple_attention pooling_encoder multi_window_din_encoder self_attention_encoder", ""},
    {"Tower", kHonoured, "input mlp", ""},
    {"DINTower", kHonoured, "input attn_mlp", ""},
    {"TaskTower", kHonoured,
     "tower_name label_name metrics losses num_class mlp weight sample_weight_name "
     "task_space_indicator_label in_task_space_weight out_task_space_weight "
     "pareto_min_loss_weight train_metrics",
     ""},
    {"BayesTaskTower", kHonoured,
     "tower_name label_name metrics losses num_class mlp weight relation_tower_names "
     "relation_mlp sample_weight_name task_space_indicator_label in_task_space_weight "
     "out_task_space_weight pareto_min_loss_weight train_metrics",
     ""},
    {"InterventionTaskTower", kHonoured,
     "tower_name label_name metrics losses num_class mlp weight intervention_tower_names low_rank_dim dropout_ratio "
     "task_space_indicator_label in_task_space_weight out_task_space_weight pareto_min_loss_weight train_metrics",
     ""},
    {"FusionSubTaskConfig", kHonoured, "task_name label_name task_bitmask losses num_class metrics weight train_metrics", ""},
    {"FusionMTLTower", kHonoured, "mlp task_configs", ""},
    {"MultiWindowDINTower", kHonoured, "windows_len attn_mlp", ""},
    {"DATTower", kHonoured, "input augment_input mlp", ""},
    {"MINDUserTower", kHonoured, "input history_input user_mlp hist_seq_mlp capsule_config concat_mlp", ""},
    {"MINDUserTower", kWarned, "user_seq_combine", "TorchEasyRec's MIND does not read it"},
    {"HSTUUserTower", kHonoured, "input hstu max_seq_len", ""},
    {"GradScaler", kHonoured, "init_scale growth_factor backoff_factor growth_interval", ""},
    {"GradClipping", kHonoured, "clipping_type max_gradient norm_type", ""},
    {"GradClipping", kWarned, "enable_global_grad_clip",
     "the clipped gradients are the dense parameters', identical on every rank after their all-reduce, so "
     "their norm is already global (TorchEasyRec gives TorchRec's clipping no sharded parameters either)"},
    {"FeatureStoreConfig", kRefused, "*", ""},
    {"DeltaEmbeddingDumpConfig", kHonoured, "dump_interval_steps output_dir file_prefix dump_interval_minutes quant_type",
     ""},
    {"DeltaEmbeddingDumpConfig", kRefused, "feature_store_config", ""},
    {"TrainConfig", kHonoured,
     "sparse_optimizer dense_optimizer num_steps num_epochs save_checkpoints_steps "
     "fine_tune_checkpoint fine_tune_ckpt_param_map log_step_count_steps is_profiling "
     "use_tensorboard save_checkpoints_epochs tensorboard_summaries "
     "global_embedding_constraints mixed_precision grad_scaler gradient_accumulation_steps "
     "grad_clipping keep_checkpoint_max save_checkpoints_timestamp_interval "
     "save_checkpoints_timestamps save_checkpoints_timestamp_quorum delta_embedding_dump_config",
     ""},
    {"TrainConfig", kWarned,
     "cudnn_allow_tf32 cuda_matmul_allow_tf32",
     "CUDA only: no effect in this CPU engine"},
};

struct Registry {
  std::map<std::string, FieldRule> by_field;    // "Message.field"
  std::map<std::string, FieldRule> by_message;  // "Message" for "*" entries
  std::vector<std::string> stale;
};

const Registry& registry() {
  static const Registry reg = [] {
    Registry r;
    const pb::DescriptorPool* pool = pb::DescriptorPool::generated_pool();
    for (const Entry& e : kEntries) {
      const std::string message = e.message;
      const pb::Descriptor* d = pool->FindMessageTypeByName("tzrec.protos." + message);
      if (d == nullptr) r.stale.push_back(message);
      const FieldRule rule{e.support, e.why};
      std::istringstream names(e.fields);
      for (std::string name; names >> name;) {
        if (name == "*") {
          r.by_message[message] = rule;
          continue;
        }
        if (d != nullptr && d->FindFieldByName(name) == nullptr) r.stale.push_back(message + "." + name);
        r.by_field[message + "." + name] = rule;
      }
    }
    return r;
  }();
  return reg;
}

// The message name without the package ("IdFeature" for tzrec.protos.IdFeature).
std::string short_name(const pb::Descriptor* d) {
  const std::string& full = d->full_name();
  const std::string prefix = "tzrec.protos.";
  return full.compare(0, prefix.size(), prefix) == 0 ? full.substr(prefix.size()) : full;
}

// A singular scalar equal to its declared default changes nothing.
bool is_default_scalar(const pb::Message& msg, const pb::FieldDescriptor* f) {
  if (f->is_repeated()) return false;
  const pb::Reflection* r = msg.GetReflection();
  switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_INT32: return r->GetInt32(msg, f) == f->default_value_int32();
    case pb::FieldDescriptor::CPPTYPE_INT64: return r->GetInt64(msg, f) == f->default_value_int64();
    case pb::FieldDescriptor::CPPTYPE_UINT32: return r->GetUInt32(msg, f) == f->default_value_uint32();
    case pb::FieldDescriptor::CPPTYPE_UINT64: return r->GetUInt64(msg, f) == f->default_value_uint64();
    case pb::FieldDescriptor::CPPTYPE_FLOAT: return r->GetFloat(msg, f) == f->default_value_float();
    case pb::FieldDescriptor::CPPTYPE_DOUBLE: return r->GetDouble(msg, f) == f->default_value_double();
    case pb::FieldDescriptor::CPPTYPE_BOOL: return r->GetBool(msg, f) == f->default_value_bool();
    case pb::FieldDescriptor::CPPTYPE_ENUM: return r->GetEnumValue(msg, f) == f->default_value_enum()->number();
    case pb::FieldDescriptor::CPPTYPE_STRING: return r->GetString(msg, f) == f->default_value_string();
    case pb::FieldDescriptor::CPPTYPE_MESSAGE: return false;  // a present message is a choice
  }
  return false;
}

void walk(const pb::Message& msg, const std::string& path, std::vector<FieldFinding>* out) {
  std::vector<const pb::FieldDescriptor*> fields;
  msg.GetReflection()->ListFields(msg, &fields);
  for (const pb::FieldDescriptor* f : fields) {
    const std::string fp = path.empty() ? f->name() : path + "." + f->name();
    const FieldRule* rule = field_rule(f);
    const FieldSupport support = rule ? rule->support : kRefused;
    if (support != kHonoured && is_default_scalar(msg, f)) continue;
    if (support == kRefused) {
      out->push_back({fp, kRefused, ""});
      continue;
    }
    if (support == kWarned) out->push_back({fp, kWarned, rule->why});
    if (f->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE || f->is_map()) continue;
    const pb::Reflection* r = msg.GetReflection();
    if (f->is_repeated()) {
      for (int i = 0; i < r->FieldSize(msg, f); ++i) {
        walk(r->GetRepeatedMessage(msg, f, i), fmt::format("{}[{}]", fp, i), out);
      }
    } else {
      walk(r->GetMessage(msg, f), fp, out);
    }
  }
}

}  // namespace

const FieldRule* field_rule(const pb::FieldDescriptor* field) {
  // The key and value of a map entry (vocab_dict, value_map) are data of the map field, which has
  // its own rule.
  static const FieldRule kMapEntry{kHonoured, ""};
  if (field->containing_type()->options().map_entry()) return &kMapEntry;
  // So are the fields of google.protobuf.Struct / Value / ListValue (custom_feature.operator_params).
  if (field->containing_type()->file()->package() == "google.protobuf") return &kMapEntry;
  const Registry& r = registry();
  const std::string message = short_name(field->containing_type());
  auto it = r.by_field.find(message + "." + field->name());
  if (it != r.by_field.end()) return &it->second;
  auto whole = r.by_message.find(message);
  return whole == r.by_message.end() ? nullptr : &whole->second;
}

std::vector<std::string> unknown_registry_entries() { return registry().stale; }

std::vector<FieldFinding> check_set_fields(const pb::Message& msg) {
  std::vector<FieldFinding> out;
  walk(msg, "", &out);
  return out;
}

}  // namespace tzrec::config
