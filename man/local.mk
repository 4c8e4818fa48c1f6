# Every man page, written directly in man(7) roff. Section 3 has one page per
# group of functions (adnn_context.3, adnn_plan.3, ...) and a link page (a .so
# request) per exported function, so that "man adnn_malloc" finds its group;
# t/man-pages.sh requires a page for every export.
adnn_man3_groups = man/adnn_context.3 man/adnn_memory.3 man/adnn_gemm.3 \
	man/adnn_tensor.3 man/adnn_plan.3 man/adnn_backend.3 man/adnn_status.3 \
	man/adnn_tuning.3 man/adnn_perfdb.3 \
	man/adnn_conv2d_backward.3 man/adnn_transformer.3
adnn_man3_links = \
	man/adnn_context_create.3 man/adnn_context_destroy.3 man/adnn_context_backend.3 \
	man/adnn_context_device.3 man/adnn_context_synchronize.3 \
	man/adnn_context_set_flags.3 man/adnn_context_get_flags.3 \
	man/adnn_malloc.3 man/adnn_free.3 man/adnn_memcpy.3 man/adnn_memset.3 \
	man/adnn_memory_register.3 man/adnn_memory_unregister.3 \
	man/adnn_gemm_batched.3 \
	man/adnn_tensor_desc_init.3 man/adnn_tensor_desc_init_strided.3 \
	man/adnn_tensor_desc_validate.3 man/adnn_tensor_desc_element_count.3 \
	man/adnn_tensor_desc_span_bytes.3 man/adnn_tensor_desc_is_packed.3 \
	man/adnn_dtype_size.3 man/adnn_dtype_name.3 \
	man/adnn_plan_create_conv2d.3 man/adnn_plan_create_pool2d.3 \
	man/adnn_plan_create_activation.3 man/adnn_plan_create_softmax.3 \
	man/adnn_plan_create_batchnorm.3 man/adnn_plan_create_norm.3 \
	man/adnn_plan_create_binary.3 man/adnn_plan_create_reduce.3 man/adnn_plan_execute.3 man/adnn_plan_execute_multi.3 man/adnn_plan_destroy.3 \
	man/adnn_training.3 \
	man/adnn_plan_create_conv2d_backward_data.3 \
	man/adnn_plan_create_conv2d_backward_weights.3 \
	man/adnn_plan_create_pool2d_backward.3 \
	man/adnn_plan_create_activation_backward.3 \
	man/adnn_plan_create_softmax_backward.3 \
	man/adnn_plan_create_batchnorm_training.3 \
	man/adnn_plan_create_batchnorm_backward.3 \
	man/adnn_plan_create_norm_backward.3 \
	man/adnn_plan_create_softmax_cross_entropy.3 \
	man/adnn_plan_create_softmax_cross_entropy_backward.3 \
	man/adnn_plan_create_optimizer.3 \
	man/adnn_plan_set_optimizer_step.3 \
	man/adnn_plan_create_loss_scale.3 \
	man/adnn_plan_create_matmul.3 man/adnn_plan_create_attention.3 \
	man/adnn_plan_create_attention_backward.3 \
	man/adnn_plan_create_reorder.3 \
	man/adnn_plan_create_quantize.3 \
	man/adnn_plan_create_dequantize.3 \
	man/adnn_plan_algorithm.3 man/adnn_plan_workspace_bytes.3 \
	man/adnn_conv2d_output_dims.3 man/adnn_pool2d_output_dims.3 \
	man/adnn_conv2d_algorithm_name.3 \
	man/adnn_backend_count.3 man/adnn_backend_get.3 man/adnn_backend_state_name.3 man/adnn_backend_auto_choice.3 \
	man/adnn_plugin_search_path.3 \
	man/adnn_status_name.3 man/adnn_status_string.3 man/adnn_last_error.3 \
	man/adnn_last_status.3 man/adnn_log_set_level.3 man/adnn_log_get_level.3 \
	man/adnn_log_set_callback.3 man/adnn_version.3 man/adnn_version_string.3 \
	man/adnn_context_set_tune_options.3 man/adnn_context_get_tune_options.3 \
	man/adnn_plan_candidate_count.3 man/adnn_plan_candidate_get.3 \
	man/adnn_plan_choice_reason.3 \
	man/adnn_perfdb_info.3 man/adnn_perfdb_export.3 man/adnn_perfdb_import.3 \
	man/adnn_context_get_backend.3 man/adnn_context_get_device.3 \
	man/adnn_plan_get_algorithm.3 man/adnn_plan_get_workspace_bytes.3 \
	man/adnn_plan_get_packed_weights_bytes.3 man/adnn_plan_pack_weights.3 \
	man/adnn_plan_get_candidate_count.3 man/adnn_plan_get_candidate.3 \
	man/adnn_plan_get_choice_reason.3 man/adnn_backend_search_path.3
dist_man_MANS += man/adnn.7 man/adnn-info.1 man/adnn-bench.1 $(adnn_man3_groups) \
	$(adnn_man3_links)
